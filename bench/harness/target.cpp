// SPDX-License-Identifier: BSL-1.0
#include "consul_launcher/consul_server.hpp"
#include "harness/target.hpp"

#include <conclave/dev/agent.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <stdexcept>

namespace conclave::bench {

namespace asio = boost::asio;
namespace json = boost::json;

std::uint64_t agent_counters::endpoint(const std::string& name) const {
    const auto it = by_endpoint.find(name);
    return it == by_endpoint.end() ? 0 : it->second;
}

agent_counters agent_counters::since(const agent_counters& before) const {
    agent_counters d;
    // The later snapshot's own stats read is counted before it is answered.
    const std::uint64_t stats_reads =
        endpoint("GET /v1/_conclave/stats") - before.endpoint("GET /v1/_conclave/stats");
    d.requests = requests - before.requests - stats_reads;
    d.connections_accepted = connections_accepted - before.connections_accepted;
    d.connections_open = connections_open;
    d.blocking_waiting = blocking_waiting;
    for (const auto& [k, v] : by_endpoint)
        d.by_endpoint[k] = v - before.endpoint(k);
    d.by_endpoint.erase("GET /v1/_conclave/stats");
    return d;
}

std::uint64_t agent_counters::kv_writes() const {
    return endpoint("PUT /v1/txn") + endpoint("PUT /v1/kv") + endpoint("DELETE /v1/kv");
}

std::pair<int, std::string> http_exchange(const std::string& address, const std::string& method,
                                          const std::string& target) {
    const auto colon = address.rfind(':');
    std::string host = address.substr(0, colon);
    std::string port = colon == std::string::npos ? "8500" : address.substr(colon + 1);
    if (host.rfind("http://", 0) == 0)
        host = host.substr(7);
    try {
        asio::io_context ioc;
        asio::ip::tcp::resolver resolver(ioc);
        asio::ip::tcp::socket sock(ioc);
        asio::connect(sock, resolver.resolve(host, port));
        const std::string req = method + " " + target + " HTTP/1.1\r\nHost: " + host +
                                "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        asio::write(sock, asio::buffer(req));
        std::string reply;
        boost::system::error_code ec;
        asio::read(sock, asio::dynamic_buffer(reply), ec); // until the server closes
        const auto sp = reply.find(' ');
        const auto body = reply.find("\r\n\r\n");
        if (sp == std::string::npos || body == std::string::npos)
            return {0, {}};
        return {std::atoi(reply.c_str() + sp + 1), reply.substr(body + 4)};
    } catch (const std::exception&) {
        return {0, {}};
    }
}

bench_target::bench_target(asio::io_context& ioc, const std::string& spec,
                           const std::string& consul_bin) {
    if (spec == "process") {
        kind_ = "process";
        // A low TTL floor so the failover scenario can use short TTLs.
        child_ = std::make_unique<agent_process>("-session-ttl-min 100ms");
        address_ = child_->address();
    } else if (spec == "embedded") {
        kind_ = "embedded";
        dev::agent_config cfg;
        cfg.port = 0;
        cfg.session_ttl_min = std::chrono::milliseconds{100};
        cfg.enable_test_controls = true;
        embedded_ = std::make_unique<dev::agent>(ioc.get_executor(), cfg);
        embedded_->start();
        address_ = embedded_->http_address();
    } else if (spec == "consul" || spec == "consul-cluster") {
        kind_ = spec;
        if (consul_bin.empty())
            throw std::runtime_error("--agent " + spec +
                                     ": no Consul executable (set CONSUL_BIN or --consul-bin)");
        programs::consul_server_options o;
        o.binary = consul_bin;
        o.servers = spec == "consul" ? 1 : 3;
        // Short TTLs for the failover scenario (Consul's own floor is 10 s).
        o.session_ttl_min = std::chrono::milliseconds{100};
        consul_ = std::make_unique<programs::consul_server>(std::move(o));
        std::size_t via = 0;
        if (consul_->size() > 1)
            if (auto leader = consul_->leader())
                via = (*leader + 1) % consul_->size();
        address_ = consul_->http_address(via);
        has_stats_ = false;
    } else {
        kind_ = "external";
        address_ = spec;
        client_config probe;
        if (auto err = apply_http_addr(probe, spec); !err.empty())
            throw std::runtime_error("--agent: " + err);
    }
}

bench_target::~bench_target() {
    if (embedded_)
        embedded_->stop();
}

client_config bench_target::make_config(std::size_t max_connections) const {
    client_config cfg;
    apply_http_addr(cfg, address_);
    cfg.max_connections = max_connections;
    cfg.observer = renewals_;
    return cfg;
}

std::optional<agent_counters> bench_target::counters() {
    if (embedded_) {
        // Same numbers as the HTTP endpoint, without a request on the loop under test.
        const auto s = embedded_->stats();
        agent_counters c;
        c.requests = s.requests;
        c.connections_accepted = s.connections_accepted;
        c.connections_open = s.connections_open;
        c.blocking_waiting = s.blocking_queries_waiting;
        c.by_endpoint = s.by_endpoint;
        return c;
    }
    if (!has_stats_)
        return std::nullopt;
    auto [status, body] = http_exchange(address_, "GET", "/v1/_conclave/stats");
    if (status != 200) {
        has_stats_ = false; // a real Consul: no counters, only the client's own
        return std::nullopt;
    }
    try {
        const json::object o = json::parse(body).as_object();
        agent_counters c;
        c.requests = o.at("Requests").to_number<std::uint64_t>();
        c.connections_accepted = o.at("ConnectionsAccepted").to_number<std::uint64_t>();
        c.connections_open = o.at("ConnectionsOpen").to_number<std::uint64_t>();
        c.blocking_waiting = o.at("BlockingQueriesWaiting").to_number<std::uint64_t>();
        for (const auto& [k, v] : o.at("ByEndpoint").as_object())
            c.by_endpoint[std::string(k)] = v.to_number<std::uint64_t>();
        return c;
    } catch (const std::exception&) {
        has_stats_ = false;
        return std::nullopt;
    }
}

bool bench_target::expire_session(const std::string& id) {
    if (embedded_)
        return embedded_->force_expire_session(id);
    return http_exchange(address_, "PUT", "/v1/_conclave/session/expire/" + id).first == 200;
}

} // namespace conclave::bench
