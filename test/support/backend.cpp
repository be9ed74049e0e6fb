#include "support/backend.hpp"

#include <cstdio>
#include <cstdlib>
#include <random>

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
        consul_ = std::make_unique<consul_server>(std::move(*options));
        // On a cluster, a follower: every write is forwarded to the leader.
        std::size_t server = 0;
        if (auto leader = consul_->leader(); leader && consul_->size() > 1)
            server = (*leader + 1) % consul_->size();
        config_.host = "127.0.0.1";
        config_.port = consul_->http_port(server);
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

} // namespace conclave::test
