// SPDX-License-Identifier: BSL-1.0
// The dev agent's insides: configuration, state store, blocking-query hub, session TTL
// timers, test controls and counters. The HTTP server (server/connection_loop.cpp) feeds
// requests to dispatch() (server/router.cpp). Everything runs on the agent's executor; nothing here
// is thread-safe and nothing needs to be.
#pragma once

#include "devagent/src/server/http_types.hpp"
#include "devagent/src/store/blocking.hpp"
#include "devagent/src/store/state.hpp"

#include <conclave/dev/agent.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace conclave::dev::detail {

class http_server;

/// A pending error or disconnect injection (test controls).
struct injection {
    std::string prefix;
    unsigned remaining = 0;
    unsigned status = 500;
    bool disconnect = false;
};

class agent_impl : public std::enable_shared_from_this<agent_impl> {
public:
    agent_impl(boost::asio::any_io_executor ex, agent_config cfg);
    ~agent_impl();

    boost::asio::any_io_executor ex;
    agent_config cfg;
    store state;
    watch_hub hub;
    std::mt19937_64 rng;
    std::string node_id;
    agent_stats counters;
    std::vector<injection> injections;
    /// The "METHOD /pattern" key of the request being counted (server/router.cpp), kept so that
    /// counting does not allocate.
    std::string endpoint_scratch;
    std::unique_ptr<http_server> server;
    bool stopped = false;

    void start();
    void stop();
    std::uint16_t port() const;

    /// A random UUID in Consul's format (lower-case hex, 8-4-4-4-12).
    std::string new_uuid();

    /// (Re)arms the TTL timer of a session: it is invalidated after ttl x multiplier.
    void arm_session_timer(const std::string& id, std::chrono::nanoseconds ttl);
    void clear_session_timer(const std::string& id);
    /// Invalidates a session as a TTL expiry does. False when unknown.
    bool expire_session(const std::string& id);
    void reset_state();

    /// The injection matching this path, consumed; nullptr when none applies.
    const injection* take_injection(std::string_view path);

    // ---- the agent's own TTL checks (agent_checks.cpp) ------------------------------------
    /// A check registered through /v1/agent/check/register: the agent's view of it, which
    /// the agent copies to the catalog when its status changes (Consul's anti-entropy sync;
    /// a change of output alone waits there, up to check_update_interval, and is not copied
    /// here), and the TTL after which it turns critical unless updated.
    struct agent_check {
        check_rec rec;
        std::chrono::nanoseconds ttl{0};
        std::unique_ptr<boost::asio::steady_timer> timer;
    };
    std::map<std::string, agent_check> agent_checks;
    /// Adds or replaces a TTL check (its status and output kept when `c.status` is empty
    /// and it existed) and copies it to the catalog. Error text, empty on success.
    std::string register_check(check_rec c, std::chrono::nanoseconds ttl);
    /// Sets a TTL check's status and output and (unless it is the TTL running out) restarts
    /// its TTL. False when there is no such check.
    bool update_check(const std::string& id, std::string status, std::string output,
                      bool restart_ttl = true);
    /// Removes a check from the agent and the catalog (invalidating its sessions).
    void deregister_check(const std::string& id);

private:
    void arm_check_timer(const std::string& id);
    void clear_checks();

    struct ttl_timer {
        std::unique_ptr<boost::asio::steady_timer> timer;
        std::uint64_t generation = 0;
    };
    std::unordered_map<std::string, ttl_timer> ttl_timers_;
    std::uint64_t timer_generation_ = 0;
    injection last_injection_;
};

/// The largest body read for a request: kv_max_value_size for a KV PUT, max(Consul's
/// txn_max_req_len of 512 KiB, kv_max_value_size) for PUT /v1/txn, max_body_bytes for the
/// rest. The HTTP server reads no more; KV and txn name it in their 413s.
std::int64_t body_limit(const agent_config& cfg, const http_request& req);

/// Routes one request (Go's ServeMux plus Consul's handler wrapper).
boost::asio::awaitable<http_response> dispatch(std::shared_ptr<agent_impl> agent, http_request req,
                                               disconnect_probe* probe);

/// dispatch() in two halves. dispatch_now answers every request that needs no waiting
/// (counting it, and everything before its handler, once); nullopt means the handler waits
/// (a blocking query): dispatch_wait then answers it. A plain call spares most requests a
/// coroutine frame, which Asio's two-block frame cache does not keep once the operations'
/// own frames have taken it: a heap allocation per request.
std::optional<http_response> dispatch_now(agent_impl& a, const http_request& req);
boost::asio::awaitable<http_response> dispatch_wait(std::shared_ptr<agent_impl> agent,
                                                    http_request req, disconnect_probe* probe);

} // namespace conclave::dev::detail
