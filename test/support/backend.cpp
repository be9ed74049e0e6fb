// SPDX-License-Identifier: BSL-1.0
#include "support/backend.hpp"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>

namespace conclave::test {

dev::agent_config test_agent_config() {
    dev::agent_config cfg;
    cfg.port = 0;
    cfg.session_ttl_min = std::chrono::milliseconds{1000};
    cfg.enable_test_controls = true;
    return cfg;
}

std::string random_uuid() {
    static std::mt19937_64 rng{std::random_device{}()};
    const char* hex = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < 32; ++i) {
        if (i == 8 || i == 12 || i == 16 || i == 20)
            out += '-';
        out += hex[rng() % 16];
    }
    return out;
}

backend::backend(boost::asio::io_context& ioc, dev::agent_config cfg) {
    prefix_ = "conclave-test/" + random_uuid() + "/";
    if (const char* addr = std::getenv("CONCLAVE_TEST_CONSUL_ADDR"); addr && *addr) {
        config_ = config_from_env();
        if (auto err = apply_http_addr(config_, addr); !err.empty())
            throw std::runtime_error("CONCLAVE_TEST_CONSUL_ADDR: " + err);
        return;
    }
    if (auto options = consul_server_from_env()) {
        options->session_ttl_min = cfg.session_ttl_min;
        if (cfg.max_conns_per_client != dev::agent_config{}.max_conns_per_client)
            options->extra_args.insert(options->extra_args.end(),
                                       {"-hcl", "limits { http_max_conns_per_client = " +
                                                    std::to_string(cfg.max_conns_per_client) +
                                                    " }"});
        consul_ = start_test_consul(std::move(*options));
        // On a cluster, a follower: every write is forwarded to the leader.
        if (auto leader = consul_->leader(); leader && consul_->size() > 1)
            server_ = (*leader + 1) % consul_->size();
        proxy_ = std::make_unique<fault_proxy>(ioc.get_executor(), "127.0.0.1",
                                               consul_->http_port(server_));
        proxy_->start();
        config_.host = "127.0.0.1";
        config_.port = proxy_->port();
        return;
    }
    agent_ = std::make_unique<dev::agent>(ioc.get_executor(), cfg);
    agent_->start();
    config_.host = "127.0.0.1";
    config_.port = agent_->port();
}

backend::~backend() {
    if (agent_)
        agent_->stop();
    if (proxy_)
        proxy_->stop();
}

dev::agent_stats backend::stats() const {
    if (agent_)
        return agent_->stats();
    if (!proxy_)
        throw std::logic_error("no request counters on an external Consul");
    return proxy_->stats();
}

void backend::reset_stats() {
    if (agent_)
        agent_->reset_stats();
    else if (proxy_)
        proxy_->reset_stats();
}

void backend::inject_errors(const std::string& path_prefix, unsigned count, unsigned status) {
    if (agent_)
        agent_->inject_errors(path_prefix, count, status);
    else if (proxy_)
        proxy_->inject_errors(path_prefix, count, status);
    else
        throw std::logic_error("no fault injection on an external Consul");
}

void backend::inject_disconnects(const std::string& path_prefix, unsigned count) {
    if (agent_)
        agent_->inject_disconnects(path_prefix, count);
    else if (proxy_)
        proxy_->inject_disconnects(path_prefix, count);
    else
        throw std::logic_error("no fault injection on an external Consul");
}

bool backend::expire_session(const std::string& id) {
    if (agent_)
        return agent_->force_expire_session(id);
    if (!consul_)
        throw std::logic_error("no session control on an external Consul");
    // Consul answers true for unknown sessions too: ask first whether it knows it.
    auto known = consul_->request("GET", "/v1/session/info/" + id, server_);
    if (!known || known->first != 200 || known->second.find(id) == std::string::npos)
        return false;
    auto r = consul_->request("PUT", "/v1/session/destroy/" + id, server_);
    return r && r->first == 200 && r->second.rfind("true", 0) == 0;
}

void backend::reset_state() {
    if (agent_)
        agent_->reset_state();
    else if (consul_) {
        consul_->reset();
        proxy_->drop_connections(); // as the restart did to the proxy's upstream connections
    } else
        throw std::logic_error("cannot reset an external Consul");
}

bool skip_unless_dev_agent() {
    const char* addr = std::getenv("CONCLAVE_TEST_CONSUL_ADDR");
    if ((addr && *addr) || consul_server_from_env()) {
        std::printf("CONCLAVE-SKIPPED: needs the dev agent's private controls "
                    "(the tests run against a real Consul)\n");
        return true;
    }
    return false;
}

bool skip_unless_isolated() {
    const char* addr = std::getenv("CONCLAVE_TEST_CONSUL_ADDR");
    if (addr && *addr) {
        std::printf("CONCLAVE-SKIPPED: needs a server configured for the test (the tests run "
                    "against a Consul they did not start)\n");
        return true;
    }
    return false;
}

} // namespace conclave::test
