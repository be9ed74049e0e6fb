// SPDX-License-Identifier: BSL-1.0
#include "codec/go/strconv.hpp"

#include <conclave/config.hpp>
#include <conclave/error.hpp>

#include <boost/system/system_error.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace conclave {

std::string client_config::describe_address() const {
    if (kind == transport::unix_socket)
        return "unix://" + unix_path;
    std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return std::string(tls.enabled ? "https://" : "http://") + h + ":" + std::to_string(port);
}

namespace {

[[noreturn]] void fail(const std::string& what) {
    throw boost::system::system_error(make_error_code(errc::invalid_config), what);
}

} // namespace

std::string apply_http_addr(client_config& cfg, std::string_view address) {
    std::string_view rest = address;
    std::optional<bool> https;
    if (rest.starts_with("unix://")) {
        rest.remove_prefix(7);
        if (rest.empty())
            return "unix socket address has no path";
        cfg.kind = client_config::transport::unix_socket;
        cfg.unix_path = std::string(rest);
        return {};
    }
    if (rest.starts_with("https://")) {
        https = true;
        rest.remove_prefix(8);
    } else if (rest.starts_with("http://")) {
        https = false;
        rest.remove_prefix(7);
    } else if (rest.find("://") != std::string_view::npos) {
        return "unsupported scheme in address '" + std::string(address) + "'";
    }
    if (!rest.empty() && rest.back() == '/')
        rest.remove_suffix(1);
    if (rest.empty())
        return "address '" + std::string(address) + "' has no host";
    if (rest.find('/') != std::string_view::npos)
        return "address '" + std::string(address) + "' must not contain a path";

    std::string host;
    std::string_view port_text;
    if (rest.front() == '[') { // [v6]:port
        auto close = rest.find(']');
        if (close == std::string_view::npos)
            return "unterminated IPv6 literal in address '" + std::string(address) + "'";
        host = std::string(rest.substr(1, close - 1));
        auto after = rest.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':')
                return "unexpected text after IPv6 literal in '" + std::string(address) + "'";
            port_text = after.substr(1);
        }
    } else {
        auto colon = rest.rfind(':');
        if (colon != std::string_view::npos && rest.find(':') == colon) {
            host = std::string(rest.substr(0, colon));
            port_text = rest.substr(colon + 1);
        } else {
            host = std::string(rest); // a bare host (or a bare IPv6 literal)
        }
    }
    if (host.empty())
        return "address '" + std::string(address) + "' has no host";
    // As Go's api.NewClient: "http://" never reverts to http when TLS was requested.
    const bool tls = https.value_or(false) || cfg.tls.enabled;
    unsigned long port = tls ? 443 : 80; // what Go's net/url does for a bare host
    if (!port_text.empty()) {
        if (!std::all_of(port_text.begin(), port_text.end(),
                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
            port_text.size() > 5 || (port = std::stoul(std::string(port_text))) == 0 ||
            port > 65535)
            return "invalid port '" + std::string(port_text) + "' in address '" +
                   std::string(address) + "'";
    }
    cfg.kind = client_config::transport::tcp;
    cfg.host = std::move(host);
    cfg.port = static_cast<std::uint16_t>(port);
    cfg.tls.enabled = tls;
    return {};
}

client_config config_from_env() {
    return config_from_env([](std::string_view name) -> std::optional<std::string> {
        const char* v = std::getenv(std::string(name).c_str());
        if (v == nullptr)
            return std::nullopt;
        return std::string(v);
    });
}

client_config
config_from_env(const std::function<std::optional<std::string>(std::string_view)>& lookup) {
    client_config cfg;
    auto get = [&](std::string_view name) -> std::optional<std::string> {
        auto v = lookup(name);
        if (v && v->empty())
            return std::nullopt; // the CLI treats an empty variable as unset
        return v;
    };
    // SSL first: it decides the default port of a bare host in CONSUL_HTTP_ADDR.
    if (auto v = get("CONSUL_HTTP_SSL")) {
        auto b = codec::go::parse_bool(*v);
        if (!b)
            fail("CONSUL_HTTP_SSL: cannot parse '" + *v + "' as a boolean");
        cfg.tls.enabled = *b;
    }
    if (auto v = get("CONSUL_HTTP_ADDR")) {
        if (auto err = apply_http_addr(cfg, *v); !err.empty())
            fail("CONSUL_HTTP_ADDR: " + err);
    }
    if (auto v = get("CONSUL_HTTP_SSL_VERIFY")) {
        auto b = codec::go::parse_bool(*v);
        if (!b)
            fail("CONSUL_HTTP_SSL_VERIFY: cannot parse '" + *v + "' as a boolean");
        cfg.tls.verify = *b;
    }
    if (auto v = get("CONSUL_HTTP_TOKEN"))
        cfg.token = *v;
    if (auto v = get("CONSUL_HTTP_AUTH"))
        cfg.http_auth = *v;
    if (auto v = get("CONSUL_NAMESPACE"))
        cfg.namespace_name = *v;
    if (auto v = get("CONSUL_PARTITION"))
        cfg.partition = *v;
    if (auto v = get("CONSUL_HTTP_TOKEN_FILE")) {
        std::ifstream in(*v);
        if (!in)
            fail("CONSUL_HTTP_TOKEN_FILE: cannot read '" + *v + "'");
        std::stringstream ss;
        ss << in.rdbuf();
        std::string token = ss.str();
        const auto not_space = [](unsigned char c) { return !std::isspace(c); };
        token.erase(token.begin(), std::find_if(token.begin(), token.end(), not_space));
        token.erase(std::find_if(token.rbegin(), token.rend(), not_space).base(), token.end());
        if (!token.empty())
            cfg.token = token; // as the Consul CLI: a non-empty token file wins
    }
    if (auto v = get("CONSUL_CACERT"))
        cfg.tls.ca_file = *v;
    if (auto v = get("CONSUL_CAPATH"))
        cfg.tls.ca_path = *v;
    if (auto v = get("CONSUL_CLIENT_CERT"))
        cfg.tls.cert_file = *v;
    if (auto v = get("CONSUL_CLIENT_KEY"))
        cfg.tls.key_file = *v;
    if (auto v = get("CONSUL_TLS_SERVER_NAME"))
        cfg.tls.server_name = *v;
    if (cfg.tls.cert_file.empty() != cfg.tls.key_file.empty())
        fail("CONSUL_CLIENT_CERT and CONSUL_CLIENT_KEY must be set together");
    return cfg;
}

} // namespace conclave
