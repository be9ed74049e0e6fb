// SPDX-License-Identifier: BSL-1.0
// A dev agent on a test-owned io_context, plus helpers the agent tests share.
#pragma once

#include "support/backend.hpp"
#include "support/http_client.hpp"
#include "support/run.hpp"

#include <conclave/dev/agent.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <stdexcept>
#include <string>

// g++ 12 reports a false -Wmismatched-new-delete for Asio's awaitable frames (its own
// operator new/delete pair) when a test coroutine is inlined into its caller.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace conclave::test {

namespace json = boost::json;

struct agent_fixture {
    asio::io_context ioc;
    dev::agent agent;

    explicit agent_fixture(dev::agent_config cfg = test_agent_config())
        : agent(ioc.get_executor(), std::move(cfg)) {
        agent.start();
    }
    ~agent_fixture() { agent.stop(); }

    std::uint16_t port() const { return agent.port(); }
};

/// PUT /v1/session/create with a JSON body; returns the ID (throws on failure).
inline asio::awaitable<std::string> create_session(std::uint16_t port, json::value body) {
    const http_reply r = co_await http(port, "PUT", "/v1/session/create", json::serialize(body));
    if (r.status != 200)
        throw std::runtime_error("session create failed: " + std::to_string(r.status) + " " +
                                 r.body);
    co_return std::string(r.json().at("ID").as_string());
}

/// Waits until the agent has at least `n` blocking queries parked (an observable event:
/// the count is read, no fixed sleep decides the outcome).
inline asio::awaitable<void>
until_blocked(dev::agent& a, std::size_t n,
              std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (a.stats().blocking_queries_waiting < n) {
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("no blocking query parked in time");
        co_await sleep_for(std::chrono::milliseconds(2));
    }
}

/// Waits until the agent has at most `n` blocking queries parked.
inline asio::awaitable<void>
until_unblocked(dev::agent& a, std::size_t n,
                std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (a.stats().blocking_queries_waiting > n) {
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("blocking queries still parked");
        co_await sleep_for(std::chrono::milliseconds(2));
    }
}

inline double seconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

} // namespace conclave::test
