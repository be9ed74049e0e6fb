// SPDX-License-Identifier: BSL-1.0
// `conclave agent -dev`: runs the embedded dev agent until SIGINT/SIGTERM.
#include "cli/commands.hpp"
#include "codec/go/duration.hpp"
#include "codec/go/strconv.hpp"

#include <conclave/dev/agent.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/system/system_error.hpp>

#include <csignal>
#include <cstdio>
#include <optional>
#include <string>

namespace conclave::cli {

namespace {

constexpr const char* agent_usage = R"(Usage: conclave agent -dev [options]

  Runs an in-memory, single-node dev agent that speaks the part of Consul's HTTP API
  conclave uses (KV, sessions, transactions, blocking queries), with Consul 1.8's
  semantics. State is lost when it stops. It prints one line once listening:
  "conclave dev agent listening on <host:port>".

Options:

  -dev                     Required: run in development mode.
  -http-addr=<host:port>   Address to listen on (default 127.0.0.1:8500; port 0 picks
                           a free port).
  -session-ttl-min=<dur>   Smallest session TTL accepted (default 10s).
  -node=<name>             Node name of the agent (default conclave-dev).
  -datacenter=<name>       Datacenter name (default dc1).
  -http-max-conns-per-client=<n>
                           Connections one client address may hold open at once; one
                           more is answered 429 and closed (Consul's
                           limits.http_max_conns_per_client; default 200, 0: no limit).
  -test-controls           Enable the private /v1/_conclave/... test controls.
  -help                    Show this help.
)";

struct flag_error {
    std::string message;
};

// host:port or [v6]:port.
bool split_host_port(std::string_view addr, std::string& host, std::uint16_t& port) {
    std::string_view h, p;
    if (!addr.empty() && addr.front() == '[') {
        const auto close = addr.find(']');
        if (close == std::string_view::npos || close + 1 >= addr.size() || addr[close + 1] != ':')
            return false;
        h = addr.substr(1, close - 1);
        p = addr.substr(close + 2);
    } else {
        const auto colon = addr.rfind(':');
        if (colon == std::string_view::npos)
            return false;
        h = addr.substr(0, colon);
        p = addr.substr(colon + 1);
        if (h.find(':') != std::string_view::npos)
            return false;
    }
    if (p.empty() || p.size() > 5)
        return false;
    unsigned value = 0;
    for (const char c : p) {
        if (c < '0' || c > '9')
            return false;
        value = value * 10 + unsigned(c - '0');
    }
    if (value > 65535)
        return false;
    host = h.empty() || h == "localhost" ? "127.0.0.1" : std::string(h);
    port = static_cast<std::uint16_t>(value);
    return true;
}

} // namespace

int agent_command(args a) {
    dev::agent_config cfg;
    bool dev_mode = false;
    std::string http_addr = "127.0.0.1:8500";

    // Go's flag package syntax: -name, --name, -name=value, -name value (non-bool flags).
    for (std::size_t i = 0; i < a.size(); ++i) {
        std::string_view arg = a[i];
        if (arg == "--")
            break;
        if (arg.size() < 2 || arg[0] != '-') {
            std::fprintf(stderr, "conclave agent: unexpected argument '%s'\n%s",
                         std::string(arg).c_str(), agent_usage);
            return 1;
        }
        std::string_view name = arg.substr(1);
        if (name[0] == '-')
            name.remove_prefix(1);
        if (name.empty() || name[0] == '-' || name[0] == '=') {
            std::fprintf(stderr, "bad flag syntax: %s\n%s", std::string(arg).c_str(), agent_usage);
            return 1;
        }
        std::optional<std::string> value;
        if (const auto eq = name.find('='); eq != std::string_view::npos) {
            value = std::string(name.substr(eq + 1));
            name = name.substr(0, eq);
        }
        const std::string flag(name);
        if (flag == "help" || flag == "h") {
            std::fputs(agent_usage, stdout);
            return 0;
        }
        const bool is_bool = flag == "dev" || flag == "test-controls";
        const bool known = is_bool || flag == "http-addr" || flag == "session-ttl-min" ||
                           flag == "node" || flag == "datacenter" ||
                           flag == "http-max-conns-per-client";
        if (!known) {
            std::fprintf(stderr, "flag provided but not defined: -%s\n%s", flag.c_str(),
                         agent_usage);
            return 1;
        }
        if (is_bool) {
            const std::optional<bool> b = value ? codec::go::parse_bool(*value) : true;
            if (!b) {
                std::fprintf(stderr, "invalid boolean value \"%s\" for -%s: parse error\n%s",
                             value->c_str(), flag.c_str(), agent_usage);
                return 1;
            }
            (flag == "dev" ? dev_mode : cfg.enable_test_controls) = *b;
            continue;
        }
        if (!value) {
            if (i + 1 >= a.size()) {
                std::fprintf(stderr, "flag needs an argument: -%s\n%s", flag.c_str(), agent_usage);
                return 1;
            }
            value = std::string(a[++i]);
        }
        if (flag == "http-addr") {
            http_addr = *value;
        } else if (flag == "session-ttl-min") {
            const auto d = codec::go::parse_duration(*value);
            if (!d.value || d.value->count() < 0) {
                std::fprintf(stderr, "invalid value \"%s\" for flag -%s: parse error\n%s",
                             value->c_str(), flag.c_str(), agent_usage);
                return 1;
            }
            cfg.session_ttl_min = std::chrono::duration_cast<std::chrono::milliseconds>(*d.value);
        } else if (flag == "http-max-conns-per-client") {
            std::size_t n = 0;
            bool ok = !value->empty() && value->size() <= 9;
            for (const char c : *value) {
                ok = ok && c >= '0' && c <= '9';
                n = n * 10 + std::size_t(c - '0');
            }
            if (!ok) {
                std::fprintf(stderr, "invalid value \"%s\" for flag -%s: parse error\n%s",
                             value->c_str(), flag.c_str(), agent_usage);
                return 1;
            }
            cfg.max_conns_per_client = n;
        } else if (flag == "node") {
            if (value->empty()) {
                std::fputs("conclave agent: -node must not be empty\n", stderr);
                return 1;
            }
            cfg.node_name = *value;
        } else if (flag == "datacenter") {
            if (value->empty()) {
                std::fputs("conclave agent: -datacenter must not be empty\n", stderr);
                return 1;
            }
            cfg.datacenter = *value;
        }
    }
    if (!dev_mode) {
        std::fprintf(stderr, "conclave agent: only development mode is supported: add -dev\n%s",
                     agent_usage);
        return 1;
    }
    if (!split_host_port(http_addr, cfg.address, cfg.port)) {
        std::fprintf(stderr, "conclave agent: invalid -http-addr '%s' (want host:port)\n",
                     http_addr.c_str());
        return 1;
    }

    boost::asio::io_context ioc;
    dev::agent agent(ioc.get_executor(), cfg);
    try {
        agent.start();
    } catch (const boost::system::system_error& e) {
        std::fprintf(stderr, "conclave agent: cannot listen on %s: %s\n", http_addr.c_str(),
                     e.code().message().c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "conclave agent: cannot listen on %s: %s\n", http_addr.c_str(),
                     e.what());
        return 1;
    }
    std::printf("conclave dev agent listening on %s (node %s, datacenter %s)\n",
                agent.http_address().c_str(), cfg.node_name.c_str(), cfg.datacenter.c_str());
    std::fflush(stdout);

    boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int) {
        if (ec)
            return;
        std::fputs("conclave dev agent: shutting down\n", stderr);
        agent.stop();
        ioc.stop();
    });
    ioc.run();
    return 0;
}

} // namespace conclave::cli
