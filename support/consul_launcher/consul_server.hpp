// SPDX-License-Identifier: BSL-1.0
// A real Consul, started by a test or the benchmark: one `consul agent -dev` or an N-server
// cluster on loopback, on ports nobody else uses, torn down with its owner.
//
// Nothing is left behind: each server runs with PR_SET_PDEATHSIG, so it is killed with the
// thread that started it, also when the program crashes, is interrupted or is killed by a
// timeout; the destructor kills and reaps what is still running and removes the data
// directories. Start servers from a thread that outlives them (the main thread).
#pragma once

#include "process/child_process.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conclave::programs {

struct consul_server_options {
    std::string binary;   ///< a Consul executable (≥ 1.8)
    unsigned servers = 1; ///< 1: `agent -dev` (in memory); more: a Raft cluster
    /// Consul's session_ttl_min (its own default is 10 s).
    std::chrono::milliseconds session_ttl_min{1000};
    /// More agent flags, for example `-hcl 'limits { ... }'`.
    std::vector<std::string> extra_args;
    /// Not empty: ACLs on, default policy "deny", this the management (master) token, which
    /// the harness's own requests (readiness, request()) carry.
    std::string acl_master_token;
};

class consul_server {
public:
    /// Starts the servers and returns once every one knows the leader and has its node
    /// registered with a passing serfHealth check (so sessions can be created on any).
    /// Throws std::runtime_error with the end of the servers' logs when they do not start.
    explicit consul_server(consul_server_options options);
    ~consul_server();
    consul_server(const consul_server&) = delete;
    consul_server& operator=(const consul_server&) = delete;

    std::size_t size() const { return servers_.size(); }
    /// "127.0.0.1:PORT", the HTTP address of server `i`.
    std::string http_address(std::size_t i = 0) const;
    std::uint16_t http_port(std::size_t i = 0) const { return servers_.at(i).http; }
    /// The node name server `i` registers (sessions created through it default to it).
    std::string node_name(std::size_t i = 0) const;
    bool running(std::size_t i) const { return servers_.at(i).process != nullptr; }
    /// True when a server of this cluster was killed (kill, restart) since the cluster
    /// formed (its start, or reset). Such a cluster may not be what a new one is: the
    /// restarted server can be a non-voter until Consul's autopilot promotes it again.
    bool disturbed() const { return disturbed_; }

    /// SIGKILLs server `i` and reaps it (a crash: no leave, no goodbye to the cluster).
    void kill(std::size_t i);
    /// Starts server `i` again on its ports. A dev agent comes back with empty state; a
    /// cluster server with its data directory. Returns once it is ready as above.
    void restart(std::size_t i);
    /// Kills every server and starts them again on their ports with empty state (a cluster's
    /// data directories are removed); returns once they are ready.
    void reset();
    /// The index of the current Raft leader among the running servers, if one is known.
    std::optional<std::size_t> leader() const;
    /// One request to server `i` ("PUT", "/v1/session/destroy/ID"): its status and body, or
    /// nothing when it did not answer within 2 s.
    std::optional<std::pair<unsigned, std::string>> request(std::string_view method,
                                                            const std::string& target,
                                                            std::size_t i = 0,
                                                            const std::string& body = {}) const;
    /// Waits until the running servers agree on a leader and are ready as above.
    void wait_ready(std::chrono::milliseconds limit = std::chrono::seconds{60}) const;

private:
    struct server {
        std::uint16_t http = 0, serf_lan = 0, serf_wan = 0, rpc = 0;
        std::string data_dir; ///< empty for a dev agent
        std::string log_path;
        std::unique_ptr<child_process> process; ///< while it runs
    };

    void shut_down();
    void choose_ports();
    bool spawn(std::size_t i);
    void respawn(std::size_t i);
    std::vector<std::string> arguments(std::size_t i) const;
    std::string log_tails() const;

    consul_server_options options_;
    std::string dir_; ///< scratch directory: logs, cluster data
    std::vector<server> servers_;
    bool disturbed_ = false;
};

} // namespace conclave::programs
