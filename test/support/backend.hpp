// SPDX-License-Identifier: BSL-1.0
// The Consul the tests talk to: an embedded dev agent by default; a real Consul started for
// the test when CONCLAVE_TEST_CONSUL_BIN (dev agent) or CONCLAVE_TEST_CONSUL_CLUSTER (three
// servers) names its executable; or the server CONCLAVE_TEST_CONSUL_ADDR names.
#pragma once

#include "support/consul_server.hpp"
#include "support/fault_proxy.hpp"

#include <conclave/client.hpp>
#include <conclave/dev/agent.hpp>

#include <boost/asio/io_context.hpp>

#include <memory>
#include <string>

namespace conclave::test {

/// Agent settings used by tests: loopback, free port, 1 s minimum TTL (as the golden
/// transcripts' recording agent), test controls on.
dev::agent_config test_agent_config();

class backend {
public:
    explicit backend(boost::asio::io_context& ioc, dev::agent_config cfg = test_agent_config());
    ~backend();

    /// True when the server is not the embedded agent.
    bool external() const { return agent_ == nullptr; }
    /// True when the test has the server to itself (embedded, or a Consul started for it or
    /// cleaned for it, start_test_consul), so that it can check that nothing was left on it.
    bool isolated() const { return agent_ != nullptr || consul_ != nullptr; }
    /// The embedded agent, or nullptr when external.
    dev::agent* agent() const { return agent_.get(); }
    /// The real Consul started for this test, or nullptr.
    consul_server* consul() const { return consul_.get(); }
    conclave::client_config client_config() const { return config_; }
    /// A fresh KV prefix ("conclave-test/<random>/") so tests never see each other's keys.
    std::string prefix() const { return prefix_; }

    // ---- faults and counters, on the embedded agent or on a real Consul the test started
    // (there through a fault_proxy in front of it, which the client talks to) ----

    /// What the client sent: the embedded agent's counters, or the proxy's.
    dev::agent_stats stats() const;
    void reset_stats();
    /// The next `count` requests under `path_prefix` get `status` instead of an answer.
    void inject_errors(const std::string& path_prefix, unsigned count, unsigned status = 500);
    /// The next `count` requests under `path_prefix` are answered by a closed connection.
    void inject_disconnects(const std::string& path_prefix, unsigned count);
    /// Invalidates a session: as a TTL expiry would on the embedded agent; on a real Consul
    /// by destroying it (the same invalidation: its keys released or deleted by its
    /// behaviour, lock-delay armed). False when the server does not know it.
    bool expire_session(const std::string& id);
    /// Forgets everything, as a restarted dev agent does: the embedded agent's reset; a real
    /// Consul is killed and started again on its ports with empty state.
    void reset_state();

private:
    std::unique_ptr<dev::agent> agent_;
    std::shared_ptr<consul_server> consul_; ///< start_test_consul's: perhaps shared
    std::unique_ptr<fault_proxy> proxy_;    ///< in front of consul_
    std::size_t server_ = 0;                ///< the server of consul_ the proxy forwards to
    conclave::client_config config_;
    std::string prefix_;
};

/// True (and a visible CTest skip marker is printed) when the test needs the dev agent's
/// private controls but runs against an external Consul.
bool skip_unless_dev_agent();

/// True (and a visible CTest skip marker is printed) when the test configures its server
/// (a connection limit, ...) but runs against a Consul it did not start.
bool skip_unless_isolated();

/// A random RFC 4122-shaped UUID (an ID Consul does not know).
std::string random_uuid();

} // namespace conclave::test
