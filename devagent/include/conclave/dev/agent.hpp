// SPDX-License-Identifier: BSL-1.0
/// \file
/// An embedded, in-memory, single-node server speaking the subset of Consul's HTTP API that
/// conclave uses, with Consul's semantics: class dev::agent. For tests, demos and
/// benchmarks; not a Consul replacement.
#pragma once

#include <conclave/detail/asio_fwd.hpp>
#include <conclave/detail/asio_mode.hpp>
#include <conclave/detail/export.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

/// The embedded dev agent (CMake target conclave::devagent).
namespace conclave::dev {

namespace detail {
class agent_impl;
}

/// How the dev agent listens, what it says about itself, and its limits. Plain aggregate;
/// every member has a default.
struct agent_config {
    std::string address = "127.0.0.1";      ///< listen address (loopback by default)
    std::uint16_t port = 8500;              ///< 0: pick a free port (read it back with port())
    std::string node_name = "conclave-dev"; ///< the node's name (agent/self, sessions)
    std::string datacenter = "dc1"; ///< its datacenter; a request for another gets Consul's error
    /// Smallest session TTL accepted (Consul's session_ttl_min, default 10 s).
    std::chrono::milliseconds session_ttl_min{10000};
    /// Server-side TTL timer = TTL x this (Consul: 2).
    unsigned session_ttl_multiplier = 2;
    /// Largest value of a KV write or transaction op (Consul's kv_max_value_size); a larger
    /// one is answered 413.
    std::size_t kv_max_value_size = 524288;
    /// Consul's limits.http_max_conns_per_client: connections open at once from one IP
    /// address. A connection beyond it is answered with Consul's 429 at once and closed.
    /// 0: no limit.
    std::size_t max_conns_per_client = 200;

    // ---- HTTP limits (docs/dev-agent.md, "Limits"): a request over one is answered with
    // Go's or Consul's status and its connection closed. Consul 1.8 has no timeouts and no
    // memory budget: those protect the dev agent only. A timeout of 0 is none, as in Go's
    // http.Server (where read_header_timeout and idle_timeout of 0 take read_timeout's).

    /// Largest request head (request line and header fields): Go's MaxHeaderBytes (1 MiB)
    /// plus the 4 KiB net/http allows on top. Beyond it: 431, then close. A huge value (up
    /// to SIZE_MAX) is as large as the parser takes (4 GiB), within request_memory_limit.
    std::size_t max_header_bytes = (1u << 20) + 4096;
    /// Largest request body of the endpoints without a limit of their own (KV PUT has
    /// kv_max_value_size, PUT /v1/txn max(512 KiB, kv_max_value_size)). Consul has none.
    std::size_t max_body_bytes = 1u << 20;
    /// What the requests may hold together beyond 64 KiB each, all connections: their heads
    /// and bodies while read, then their parsed path and query until answered (a parked
    /// blocking query's for its whole wait; it gives its body back). A request that would go
    /// over gets 431 (head, path and query) or is read as a too-large body. 0: no budget.
    std::size_t request_memory_limit = 64u << 20;
    /// A request head must be complete this long after its first byte (for a new
    /// connection: after the accept); otherwise the connection is closed without an answer
    /// (Go's ReadHeaderTimeout). 0: read_timeout's (none if that is 0 too).
    std::chrono::milliseconds read_header_timeout{10000};
    /// A whole request, head and body, must arrive within this (Go's ReadTimeout). 0: none.
    std::chrono::milliseconds read_timeout{60000};
    /// A kept-alive connection may wait this long for its next request (Go's IdleTimeout).
    /// 0: read_timeout's (none if that is 0 too).
    std::chrono::milliseconds idle_timeout{600000};
    /// Writing one answer may take this long (a client that does not read). The wait of a
    /// blocking query is not part of it: no timeout runs while the agent prepares an answer.
    /// 0: none.
    std::chrono::milliseconds write_timeout{60000};

    /// Enables the private /v1/_conclave/... controls (force-expire, inject errors, reset).
    bool enable_test_controls = false;
};

/// Request counters, by endpoint class.
struct agent_stats {
    std::uint64_t requests = 0;               ///< requests dispatched to an endpoint
    std::uint64_t connections_accepted = 0;   ///< connections accepted
    std::size_t connections_open = 0;         ///< connections open now
    std::size_t blocking_queries_waiting = 0; ///< blocking queries parked now
    /// Connections answered 429 at once (max_conns_per_client) and closed.
    std::uint64_t connections_refused = 0;
    /// Connections closed by read_header_timeout, read_timeout, idle_timeout or
    /// write_timeout.
    std::uint64_t connections_timed_out = 0;
    /// Requests that broke an HTTP rule or limit (400, 413, 431, 501, or a body that could
    /// not be read): answered, then their connection closed.
    std::uint64_t requests_rejected = 0;
    /// Exceptions the HTTP server caught (its last line of defence): the connection ends.
    std::uint64_t internal_errors = 0;
    std::map<std::string, std::uint64_t> by_endpoint; ///< e.g. "GET /v1/kv", "PUT /v1/txn"
};

/// The embedded agent runs on the executor it is given; it starts no threads.
class CONCLAVE_DECL agent {
public:
    /// An agent on `ex`, not yet listening (see start()).
    agent(asio::any_io_executor ex, agent_config cfg = {});
    /// Stops it (see stop()).
    ~agent();
    agent(const agent&) = delete;
    agent& operator=(const agent&) = delete;

    /// Binds and starts accepting. Throws boost::system::system_error when it cannot bind.
    void start();
    /// Closes the listener and every connection; blocking queries end.
    void stop();

    /// The port it listens on (the one picked when agent_config::port was 0).
    std::uint16_t port() const;
    /// "<address>:<port>" ("127.0.0.1:8500" by default; an IPv6 address in brackets), ready
    /// for client_config / CONSUL_HTTP_ADDR.
    std::string http_address() const;
    /// The settings it was built with.
    const agent_config& config() const;
    /// The counters now.
    agent_stats stats() const;
    /// Sets the counters back to zero (the gauges, connections_open and
    /// blocking_queries_waiting, keep counting what is open).
    void reset_stats();

    // ---- test controls (also reachable over HTTP when enable_test_controls is set) ----

    /// Invalidates a session exactly as a TTL expiry would. False when unknown.
    bool force_expire_session(const std::string& id);
    /// The next `count` requests whose path starts with `path_prefix` get `status` with a
    /// Consul-like body ("No cluster leader" style) instead of being served.
    void inject_errors(const std::string& path_prefix, unsigned count, unsigned status = 500);
    /// The next `count` requests whose path starts with `path_prefix` are answered by
    /// closing the connection without a response.
    void inject_disconnects(const std::string& path_prefix, unsigned count);
    /// Forgets everything, as a restarted dev agent would: KV, sessions, lock-delays and
    /// the index (which therefore goes backwards). Blocking queries are woken.
    void reset_state();
    /// Drops every tombstone (Consul's tombstone GC), so list indexes may go backwards.
    void reap_tombstones();

private:
    std::shared_ptr<detail::agent_impl> impl_;
};

} // namespace conclave::dev
