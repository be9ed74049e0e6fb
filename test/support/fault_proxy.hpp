// SPDX-License-Identifier: BSL-1.0
// A fault-injecting HTTP/1.1 proxy for tests: it sits between a client and any Consul (the
// embedded dev agent or a real one) and offers the dev agent's private controls there:
// request statistics, injected errors and disconnects, and responses held back on demand.
// Each client connection gets its own upstream connection (1:1, keep-alive on both), so the
// server sees one connection per client connection, as without the proxy.
#pragma once

#include <conclave/dev/agent.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace conclave::test {

/// The dev agent's counters, as the proxy sees the requests it forwards or answers.
using proxy_stats = dev::agent_stats;

/// Runs on the executor it is given; starts no threads. Forwarded requests have no
/// proxy-side timeout (blocking queries may last minutes).
class fault_proxy {
public:
    fault_proxy(boost::asio::any_io_executor ex, std::string upstream_host,
                std::uint16_t upstream_port);
    /// Stops.
    ~fault_proxy();
    fault_proxy(const fault_proxy&) = delete;
    fault_proxy& operator=(const fault_proxy&) = delete;

    /// Binds 127.0.0.1 on a free port and starts accepting.
    void start();
    /// Closes the listener and every connection, both sides; held responses are dropped.
    void stop();

    /// Closes every connection, both sides, and goes on accepting: what a server's restart
    /// does to its clients' connections.
    void drop_connections();

    std::uint16_t port() const;
    /// "127.0.0.1:PORT".
    std::string http_address() const;
    proxy_stats stats() const;
    void reset_stats();

    /// The next `count` requests whose path (without the query) starts with `path_prefix`
    /// get `status` with a Consul-like plain-text body ("No cluster leader" for 500,
    /// "injected error" otherwise) instead of being forwarded.
    void inject_errors(const std::string& path_prefix, unsigned count, unsigned status = 500);
    /// The next `count` matching requests are answered by closing the client connection
    /// (and its upstream connection) without a response; they are not forwarded.
    void inject_disconnects(const std::string& path_prefix, unsigned count);
    /// How hold_responses() matches a request's path (without the query).
    enum class path_match {
        prefix, ///< the path starts with the one given
        exact,  ///< the path is the one given (e.g. a lock key, not its contender keys)
    };
    /// Matching requests are forwarded, but their responses are held (not sent to the client)
    /// until release_held(). Replaces a previous path. With `blocking_only`, only blocking
    /// reads (`?index=N`, N > 0) are held; the other requests on the path are answered.
    void hold_responses(const std::string& path, path_match m = path_match::prefix,
                        bool blocking_only = false);
    /// Sends every held response and stops holding.
    void release_held();
    /// Responses held right now.
    std::size_t held() const;
    /// Completes once held() > 0 (at once if it already is). Throws
    /// boost::system::system_error (operation_aborted) when the proxy stops first.
    boost::asio::awaitable<void> async_wait_held();

    /// How misbehave_blocking() answers.
    enum class index_fault {
        none, ///< forward blocking reads as they are
        zero, ///< answer at once with X-Consul-Index 0
        same, ///< answer at once with the index asked (no change, long before the wait)
    };
    /// Blocking reads (`?index=N`, N > 0) whose path starts with `path_prefix` are answered
    /// at once, as a misbehaving server or proxy would: forwarded without their `index` and
    /// `wait`, the response's X-Consul-Index replaced as `f` says. Counted in stats() as
    /// "GET (answered at once)". `none` ends it.
    void misbehave_blocking(const std::string& path_prefix, index_fault f);

    struct state; ///< public only so that the implementation's helpers can name it

private:
    std::shared_ptr<state> state_;
};

} // namespace conclave::test
