// SPDX-License-Identifier: BSL-1.0
// The shared state behind conclave::client: the pool, the config, and request plumbing.
#pragma once

#include "http/lane.hpp"
#include "http/pool.hpp"

#include <conclave/client.hpp>

#include <boost/beast/http/verb.hpp>

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace conclave::detail {

namespace asio = boost::asio;

/// One Consul API call, before it becomes an HTTP request.
struct api_call {
    /// Which endpoint, in reports: one of request_event::endpoint's fixed set.
    std::string_view endpoint = "other";
    boost::beast::http::verb method = boost::beast::http::verb::get;
    std::string path; ///< percent-encoded, e.g. "/v1/kv/a%20b"
    /// Query parameters; an empty optional value is a presence-only flag ("?recurse").
    std::vector<std::pair<std::string, std::optional<std::string>>> params;
    std::string body;
    const char* content_type = nullptr;
    std::string datacenter;
    /// Consul Enterprise's ?ns= and ?partition= (empty: none sent). client_impl::new_call
    /// starts them at the client's defaults; an endpoint's options override them.
    std::string namespace_name;
    std::string partition;
    bool blocking = false; ///< a blocking read (index > 0)
    /// Answers one entry at most (a key, a session, a write's true/false): the reply is
    /// held to client_config::max_entry_response_body rather than max_response_body.
    bool one_entry = false;
    std::chrono::milliseconds wait{0}; ///< its wait (0: Consul's default)
    diagnostics* diag = nullptr;
    /// A write Consul may have received is finished before the caller's cancellation is
    /// reported (see client_impl::send). Off for writes that need no order (renewals).
    bool finish_once_sent = true;
    /// Ends the call with errc::timeout, when earlier than the request timeout.
    std::optional<std::chrono::steady_clock::time_point> deadline;
    /// Whether the request carried an ACL token (set by client_impl::send).
    bool token_sent = false;

    void flag(std::string name) { params.emplace_back(std::move(name), std::nullopt); }
    void param(std::string name, std::string value) {
        params.emplace_back(std::move(name), std::move(value));
    }
};

/// What came back: status, body, meta headers (the connection reads them into it directly).
using api_reply = http::response;

class folder_read;

class client_impl : public std::enable_shared_from_this<client_impl> {
public:
    client_impl(asio::any_io_executor ex, client_config cfg);

    /// A call with the client's defaults in it (namespace, partition).
    api_call new_call() const;

    /// Sends `call`; fails only for transport problems (any HTTP status is a reply).
    /// GETs that fail on a reused keep-alive connection are retried once on a new one (not
    /// blocking queries: their loops re-read without blocking after a failure).
    /// Reports each call to the config's logger and observer.
    asio::awaitable<std::pair<error_code, api_reply>> send(api_call& call);
    /// send() without the reports.
    asio::awaitable<std::pair<error_code, api_reply>> send_unreported(api_call& call);

    asio::any_io_executor executor;
    client_config config;
    /// The Host header every request carries (built once, not per request).
    std::string host_header;
    /// The Authorization header of client_config::http_auth ("Basic ...", or empty).
    std::string authorization;
    std::shared_ptr<http::pool> pool;
    /// Blocking queries pass through it, so they never hold every pooled connection.
    std::shared_ptr<http::lane> blocking_lane;
    std::uint64_t requests = 0;
    std::uint64_t retries = 0;
    /// State the recipes share among all users of this client (e.g. one watcher per lock
    /// key), by name. Weak: the users own it; entries are erased by their destructors.
    std::unordered_map<std::string, std::weak_ptr<void>> shared_state;
    /// The folders whose blocking queries readers of single keys share (shared_key_read.hpp).
    std::unordered_map<std::string, std::weak_ptr<folder_read>> folder_reads;
    /// Folders whose recursive read failed where a read of a key would not (see there).
    std::unordered_set<std::string> unshareable_folders;
    std::size_t shared_key_reads = 0;      ///< readers waiting on them
    std::size_t shared_folder_queries = 0; ///< those queries running
};

/// Lets library code reach the state behind a client handle.
struct client_access {
    static client_impl& impl(const client& c) { return *c.impl_; }
};

/// Sets call.deadline from an option's per-request timeout (0: none).
inline void apply_timeout(api_call& call, std::chrono::milliseconds timeout) {
    if (timeout.count() > 0)
        call.deadline = std::chrono::steady_clock::now() + timeout;
}

/// The wait Consul gives a blocking query asking for `wait`: its default (5 min) for none,
/// at most its cap (10 min); without the jitter it adds (up to wait/16).
std::chrono::milliseconds query_wait(std::chrono::milliseconds wait);

/// Sets the namespace and partition of `call` from an operation's options, where they name
/// one (else the client's defaults stay).
template <class Options>
void apply_scope(api_call& call, const Options& o) {
    if (!o.namespace_name.empty())
        call.namespace_name = o.namespace_name;
    if (!o.partition.empty())
        call.partition = o.partition;
}

/// Sets what every request's options hold (request_options): the datacenter, the namespace
/// and partition where they name one, and the diagnostics.
template <class Options>
void apply_options(api_call& call, const request_options<Options>& o) {
    call.datacenter = o.datacenter;
    apply_scope(call, o);
    call.diag = o.diag;
}

/// Adds index/wait/consistency of `q` to `call`, and its request options (apply_options).
void apply_query(api_call& call, const query_options& q);

/// The request target: the call's path itself, or path and query (with `default_dc` for a
/// call naming no datacenter) built into `storage`.
std::string_view request_target(const api_call& call, const std::string& default_dc,
                                std::string& storage);

/// The error for a reply whose status the endpoint does not accept; fills diag.
error_code status_error(const api_call& call, const api_reply& reply);

/// For a 403: which permission the request needed, in words for the user ("the ACL token
/// lacks key write on \"app/lock\""), or that Consul does not know the token. Never the token.
std::string missing_permission(const api_call& call, std::string_view server_text, bool token_sent);

/// bad_response, with a note in diag.
error_code parse_error(const api_call& call, std::string_view what);

/// "/v1/kv/" + the key percent-encoded (slashes kept). Empty optional for a key Consul
/// would redirect or reject: beginning with '/' (after `strip_leading_slash`), or with '//'.
std::optional<std::string> kv_path(std::string_view key, bool strip_leading_slash);

/// A path segment (session ID, node name) percent-encoded.
std::string encode_segment(std::string_view s);

/// A request naming no session or check (`what`: "session", "check") is the caller's
/// mistake: errc::invalid_argument, "missing <what> ID" in `diag`, refused before it is sent.
error_code require_id(std::string_view id, std::string_view what, diagnostics* diag);

} // namespace conclave::detail
