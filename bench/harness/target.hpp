// SPDX-License-Identifier: BSL-1.0
// Where the benchmark sends its requests: the dev agent in its own process (default), the
// dev agent on this process's event loop, a real Consul the bench starts (one agent or a
// three-server cluster), or any Consul address. Also reads the agent's request counters
// (GET /v1/_conclave/stats) and its test controls when it has them.
#pragma once

#include "harness/agent_process.hpp"
#include "harness/renewals.hpp"

#include <conclave/config.hpp>

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace conclave::dev {
class agent;
}
namespace conclave::programs {
class consul_server;
}

namespace conclave::bench {

/// The agent's counters at one moment (a dev agent's /v1/_conclave/stats).
struct agent_counters {
    std::uint64_t requests = 0;
    std::uint64_t connections_accepted = 0;
    std::uint64_t connections_open = 0;
    std::uint64_t blocking_waiting = 0;
    std::map<std::string, std::uint64_t> by_endpoint; ///< "PUT /v1/txn" -> count

    std::uint64_t endpoint(const std::string& name) const;
    /// Requests between `before` and this, less the stats reads themselves.
    agent_counters since(const agent_counters& before) const;
    /// Lock and semaphore writes: PUT /v1/txn and PUT/DELETE /v1/kv.
    std::uint64_t kv_writes() const;
};

class bench_target {
public:
    /// `spec`: "process", "embedded", "consul", "consul-cluster" or an address ("host:port",
    /// "http://..."). `consul_bin`: the Consul executable the two "consul" kinds start.
    bench_target(boost::asio::io_context& ioc, const std::string& spec,
                 const std::string& consul_bin = {});
    ~bench_target();

    /// "process", "embedded", "consul", "consul-cluster" or "external".
    const std::string& kind() const { return kind_; }
    /// "127.0.0.1:<port>" (or the address given). On a cluster, a follower's: most
    /// requests reach a Consul server through one that is not the leader.
    const std::string& address() const { return address_; }
    /// True when the target is a real Consul (started here or given by address).
    bool is_consul() const { return kind_ != "process" && kind_ != "embedded"; }
    /// A client configuration for this target with a pool bound, reporting its sessions'
    /// renewals to renewals().
    client_config make_config(std::size_t max_connections) const;
    /// What the clients of make_config() reported of their renewals.
    renew_recorder& renewals() { return *renewals_; }

    /// The agent's counters, when it is a conclave dev agent.
    std::optional<agent_counters> counters();
    /// Invalidates a session as a TTL expiry would (dev agent test controls).
    bool expire_session(const std::string& id);

private:
    std::string kind_;
    std::string address_;
    bool has_stats_ = true;
    std::unique_ptr<agent_process> child_;
    std::unique_ptr<dev::agent> embedded_;
    std::unique_ptr<programs::consul_server> consul_;
    std::shared_ptr<renew_recorder> renewals_ = std::make_shared<renew_recorder>();
};

/// One plain HTTP/1.1 exchange on a fresh connection, outside any event loop (a few
/// control requests per run; never on the measured path). Returns {status, body}; status
/// 0 when the connection failed.
std::pair<int, std::string> http_exchange(const std::string& address, const std::string& method,
                                          const std::string& target);

} // namespace conclave::bench
