// SPDX-License-Identifier: BSL-1.0
// How a client reaches Consul: address, TLS, token, pool limits and timeouts.
#pragma once

#include <conclave/detail/export.hpp>
#include <conclave/log.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace conclave {

class observer;

/// TLS settings, as the Consul CLI's CONSUL_HTTP_SSL, CONSUL_CACERT, ... describe them.
///
/// The files are read once, when the client is constructed: `conclave::client`'s
/// constructor throws boost::system::system_error, its message naming the setting and the
/// path, when one cannot be used (missing or unreadable, a ca_file holding no certificate, a
/// ca_path that is not a directory, a key_file that does not match cert_file), and
/// errc::invalid_config when only one of cert_file and key_file is set. There is no fallback
/// to the system CAs in that case. Verification failures (untrusted CA, name mismatch) show
/// up per request as errors in the SSL category, which is_retryable() treats as final.
struct tls_config {
    bool enabled = false;    ///< use https
    bool verify = true;      ///< verify the server certificate and host name
    std::string ca_file;     ///< PEM bundle of trusted CAs (empty: system default paths)
    std::string ca_path;     ///< directory of hashed CA certificates
    std::string cert_file;   ///< client certificate (mutual TLS)
    std::string key_file;    ///< client private key
    std::string server_name; ///< SNI and verification name (empty: the host)
};

/// Everything a client needs. Plain aggregate; every member has a documented default.
struct CONCLAVE_DECL client_config {
    enum class transport { tcp, unix_socket };

    transport kind = transport::tcp;
    std::string host = "127.0.0.1"; ///< TCP host (name or IP literal)
    std::uint16_t port = 8500;      ///< TCP port
    std::string unix_path;          ///< socket path when kind == unix_socket
    tls_config tls;                 ///< https when tls.enabled
    std::string token;              ///< ACL token, sent as X-Consul-Token (empty: none)
    std::string datacenter;         ///< default ?dc= for every request (empty: agent's)
    /// Consul Enterprise: the namespace of every request and of the recipes' keys and
    /// sessions, sent as ?ns= (empty: none sent, the token's namespace). Consul without
    /// Enterprise refuses a non-empty one on its KV and session endpoints (HTTP 400,
    /// "Namespaces are a Consul Enterprise feature").
    std::string namespace_name;
    /// Consul Enterprise: the admin partition of every request, sent as ?partition= (empty:
    /// none sent, the agent's). Consul 1.8 ignores it on requests and refuses it in a
    /// transaction's operations.
    std::string partition;
    /// HTTP basic authentication, "user:password" (a value without ':' is a user name with
    /// an empty password), for a proxy in front of Consul: sent as `Authorization: Basic`.
    /// Consul itself ignores it. Empty: none.
    std::string http_auth;

    /// At most this many connections (and at most consul_connection_limit); further
    /// requests wait for one. Blocking queries hold a connection for their whole wait: they
    /// may use all but an eighth of them, and the rest is kept for short requests (session
    /// renewals, acquires, releases), which so never wait for a blocking query to end.
    std::size_t max_connections = 32;
    /// This client's share of the connections Consul accepts from one IP address at once:
    /// Consul's limits.http_max_conns_per_client (200 by default), or less when other
    /// clients or processes on the address also use it. Beyond it Consul refuses a new
    /// connection with a 429; the client then keeps to the connections it has (client_stats
    /// says so), but its blocking queries may hold them all until their waits end.
    std::size_t consul_connection_limit = 200;
    /// After Consul refused a connection, the client keeps to fewer; when requests then
    /// wait for a connection, it tries one more at most this often (other clients on the
    /// address may have closed theirs), and so climbs back to its limits one connection at
    /// a time. A refused try lowers it again.
    std::chrono::milliseconds connection_limit_retry{10000};
    std::chrono::milliseconds connect_timeout{5000};
    /// Deadline of a non-blocking request. Blocking reads get wait + wait/16 + this.
    std::chrono::milliseconds request_timeout{10000};
    /// Idle keep-alive connections older than this are closed rather than reused.
    std::chrono::milliseconds idle_timeout{30000};
    /// Largest response body accepted for lists (KV recurse and keys, session lists) and
    /// transactions, whose size is the data's: raise it for larger trees.
    std::size_t max_response_body = 64 * 1024 * 1024;
    /// Largest response body accepted for a request that answers one entry at most: a key
    /// (Consul caps values at 512 KiB, `kv_max_value_size`, which JSON's base64 makes
    /// about 700 KB), a session, a write's true/false, the leader, the agent. Raise it with
    /// `kv_max_value_size`. A reply beyond a limit fails with "body limit exceeded".
    std::size_t max_entry_response_body = 1024 * 1024;

    /// Where the client and the recipes on it write log lines: none by default. See
    /// conclave/log.hpp (the ACL token is never logged).
    logger log;
    /// Receives the events behind metrics (requests, connections, renewals, acquires,
    /// health changes, leadership): none by default. conclave::metrics counts them; one
    /// observer may serve several clients. See conclave/observer.hpp.
    std::shared_ptr<conclave::observer> observer;

    /// "host:port", "unix:///path", or the https/http URL form, for messages.
    std::string describe_address() const;
};

/// Applies a CONSUL_HTTP_ADDR style address ("host:port", "host", "http://host:port",
/// "https://host:port", "unix:///path/to/socket") to cfg. Returns an error message, or an
/// empty string on success.
CONCLAVE_DECL std::string apply_http_addr(client_config& cfg, std::string_view address);

/// Reads the Consul CLI's environment variables (CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN,
/// CONSUL_HTTP_TOKEN_FILE, CONSUL_HTTP_AUTH, CONSUL_NAMESPACE, CONSUL_PARTITION, CONSUL_HTTP_SSL,
/// CONSUL_HTTP_SSL_VERIFY, CONSUL_CACERT, CONSUL_CAPATH, CONSUL_CLIENT_CERT, CONSUL_CLIENT_KEY,
/// CONSUL_TLS_SERVER_NAME) on top of the defaults. Throws boost::system::system_error
/// (errc::invalid_config) with a message naming the variable when a value cannot be used.
CONCLAVE_DECL client_config config_from_env();

/// Same, reading variables through `lookup` (tests, or a custom source).
CONCLAVE_DECL client_config
config_from_env(const std::function<std::optional<std::string>(std::string_view)>& lookup);

} // namespace conclave
