// SPDX-License-Identifier: BSL-1.0
#include "cli/common/http_flags.hpp"
#include "cli/exit_codes.hpp"

#include <boost/system/system_error.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace conclave::cli {

const char* const http_flags_usage = R"(HTTP API Options

  -http-addr=<address>     Consul agent address (host:port, http(s)://host:port or
                           unix:///path). Default 127.0.0.1:8500, or CONSUL_HTTP_ADDR.
  -token=<value>           ACL token. Default CONSUL_HTTP_TOKEN.
  -token-file=<path>       File holding the ACL token (wins over -token). Default
                           CONSUL_HTTP_TOKEN_FILE.
  -datacenter=<name>       Datacenter to query. Default: the agent's.
  -namespace=<name>        Consul Enterprise namespace of the keys and sessions. Default
                           CONSUL_NAMESPACE, else the ACL token's.
  -partition=<name>        Consul Enterprise admin partition. Default CONSUL_PARTITION,
                           else the agent's.
  -ca-file=<path>          CA bundle for TLS. Default CONSUL_CACERT.
  -ca-path=<path>          Directory of CA certificates. Default CONSUL_CAPATH.
  -client-cert=<path>      Client certificate for TLS. Default CONSUL_CLIENT_CERT.
  -client-key=<path>       Client key for TLS. Default CONSUL_CLIENT_KEY.
  -tls-server-name=<name>  Server name for SNI and verification. Default
                           CONSUL_TLS_SERVER_NAME.
  -log-level=<level>       Log what the client does to stderr: trace, debug, info,
                           warn, error or off. Default off.
)";

void http_flags::add_to(flag_set& flags) {
    // Each is a string, kept as given (make_config checks them).
    using field = std::string http_flags::*;
    static constexpr std::pair<const char*, field> strings[] = {
        {"http-addr", &http_flags::http_addr},
        {"token", &http_flags::token},
        {"token-file", &http_flags::token_file},
        {"datacenter", &http_flags::datacenter},
        {"namespace", &http_flags::namespace_name},
        {"partition", &http_flags::partition},
        {"ca-file", &http_flags::ca_file},
        {"ca-path", &http_flags::ca_path},
        {"client-cert", &http_flags::client_cert},
        {"client-key", &http_flags::client_key},
        {"tls-server-name", &http_flags::tls_server_name},
        {"log-level", &http_flags::log_level}};
    for (const auto& [name, member] : strings)
        flags.add_string(name, &(this->*member));
}

std::optional<client_config> http_flags::make_config(const flag_set& flags,
                                                     std::string& error) const {
    client_config cfg;
    try {
        cfg = config_from_env();
    } catch (const boost::system::system_error& e) {
        error = "Error reading the environment: " + std::string(e.what()) +
                " (fix or unset the variable)";
        return std::nullopt;
    }
    // The TLS file flags first: -http-addr with a bare host takes its default port from
    // whether TLS is on, as in the Consul CLI.
    if (flags.was_set("ca-file"))
        cfg.tls.ca_file = ca_file;
    if (flags.was_set("ca-path"))
        cfg.tls.ca_path = ca_path;
    if (flags.was_set("client-cert"))
        cfg.tls.cert_file = client_cert;
    if (flags.was_set("client-key"))
        cfg.tls.key_file = client_key;
    if (flags.was_set("tls-server-name"))
        cfg.tls.server_name = tls_server_name;
    if (flags.was_set("http-addr") && !http_addr.empty()) {
        if (auto err = apply_http_addr(cfg, http_addr); !err.empty()) {
            error = "Invalid -http-addr: " + err;
            return std::nullopt;
        }
    }
    if (flags.was_set("token") && !token.empty())
        cfg.token = token;
    if (flags.was_set("token-file") && !token_file.empty()) {
        std::ifstream in(token_file);
        if (!in) {
            error = "Error reading -token-file '" + token_file + "': cannot open it";
            return std::nullopt;
        }
        std::stringstream ss;
        ss << in.rdbuf();
        std::string t = ss.str();
        while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' '))
            t.pop_back();
        if (!t.empty())
            cfg.token = t;
    }
    if (flags.was_set("datacenter"))
        cfg.datacenter = datacenter;
    if (flags.was_set("namespace"))
        cfg.namespace_name = namespace_name;
    if (flags.was_set("partition"))
        cfg.partition = partition;
    if (flags.was_set("log-level")) {
        const auto level = parse_log_level(log_level);
        if (!level) {
            error = "Invalid -log-level '" + log_level +
                    "': use trace, debug, info, warn, error or off";
            return std::nullopt;
        }
        cfg.log = logger::to_stderr(*level);
    }
    if (cfg.tls.cert_file.empty() != cfg.tls.key_file.empty()) {
        error = "-client-cert and -client-key (or CONSUL_CLIENT_CERT and CONSUL_CLIENT_KEY) "
                "must be given together";
        return std::nullopt;
    }
    return cfg;
}

bool http_flags::open_client(const flag_set& flags, boost::asio::io_context& ioc,
                             std::optional<client>& consul) const {
    std::string error;
    const auto cfg = make_config(flags, error);
    if (!cfg) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return false;
    }
    try {
        consul.emplace(ioc.get_executor(), *cfg);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "Error connecting to Consul agent: %s\n", e.what());
        return false;
    }
    return true;
}

int usage_error(const std::string& message, const char* usage) {
    std::fprintf(stderr, "%s\n\n%s%s", message.c_str(), usage, http_flags_usage);
    return exit_code::error;
}

std::optional<int> parse_or_usage(flag_set& flags, args a, const char* usage,
                                  std::vector<std::string_view>& rest) {
    auto parsed = flags.parse(a);
    if (parsed.status == flag_set::outcome::help) {
        std::printf("%s%s", usage, http_flags_usage);
        return exit_code::ok;
    }
    if (parsed.status == flag_set::outcome::error)
        return usage_error(parsed.error, usage);
    rest = std::move(parsed.rest);
    return std::nullopt;
}

} // namespace conclave::cli
