// SPDX-License-Identifier: BSL-1.0
// Setup of the recipe tests: a dev agent with a short minimum TTL, a client, and a check
// after every test that nothing leaked (no session, no key under the test's prefix).
#pragma once

#include "support/backend.hpp"
#include "support/cancel_after.hpp"
#include "support/catch.hpp"
#include "support/countdown.hpp"
#include "support/run.hpp"

#include <conclave/client.hpp>
#include <conclave/session.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace conclave::test {

/// Requests the agent served on `endpoint` (e.g. "PUT /v1/txn") by `s`.
inline std::uint64_t count(const dev::agent_stats& s, const std::string& endpoint) {
    auto it = s.by_endpoint.find(endpoint);
    return it == s.by_endpoint.end() ? 0 : it->second;
}

/// N contenders on one key or prefix of one client, each with its own session and `Recipe`
/// object (lock, semaphore), as separate services would be.
template <class Recipe>
struct contenders {
    explicit contenders(std::size_t n) { sessions.resize(n); }
    std::vector<session> sessions;
    std::vector<std::unique_ptr<Recipe>> objects;
};

/// Waits, by short polls with a generous bound (20 s), until `ready()`: for a state the
/// library reaches on its own (a request in flight, a waiter's query), which no event of the
/// test marks. False when it never came.
inline asio::awaitable<bool> eventually(asio::io_context& ioc, const std::function<bool()>& ready) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds{20};
    while (!ready()) {
        if (std::chrono::steady_clock::now() > end)
            co_return false;
        asio::steady_timer t{ioc, std::chrono::milliseconds{2}};
        co_await t.async_wait(asio::deferred);
    }
    co_return true;
}

/// For `co_await op(awaitable_tuple)`: errors as values, inside operators such as `||`.
inline constexpr auto awaitable_tuple = asio::as_tuple(asio::use_awaitable);

/// A session for tests: short TTL, no lock-delay.
inline session_config quick(std::chrono::milliseconds ttl = std::chrono::milliseconds{2000}) {
    return session_config{}.with_ttl(ttl).with_lock_delay(std::chrono::milliseconds{0});
}

inline dev::agent_config recipes_agent_config() {
    auto cfg = test_agent_config();
    cfg.session_ttl_min = std::chrono::milliseconds{100};
    return cfg;
}

struct recipes_fixture {
    asio::io_context ioc;
    backend server{ioc, recipes_agent_config()};
    client consul{ioc.get_executor(), server.client_config()};
    std::string p = server.prefix();

    static constexpr auto tuple_token = asio::as_tuple(asio::deferred);

    asio::awaitable<void> sleep(std::chrono::milliseconds d) {
        asio::steady_timer t{ioc, d};
        co_await t.async_wait(asio::deferred);
    }

    /// Sessions and keys this test left on the agent (none is the only right answer).
    asio::awaitable<std::pair<std::size_t, std::size_t>> leftovers() {
        auto sessions = co_await consul.async_session_list();
        auto keys = co_await consul.async_kv_keys(p);
        co_return std::pair<std::size_t, std::size_t>{sessions.sessions.size(), keys.keys.size()};
    }

    /// Waits (blocking queries, no polling sleeps) until the agent holds no session.
    asio::awaitable<void> wait_no_sessions(std::chrono::milliseconds limit) {
        const auto end = std::chrono::steady_clock::now() + limit;
        std::uint64_t index = 0;
        while (std::chrono::steady_clock::now() < end) {
            auto r = co_await consul.async_session_list(
                query_options::blocking(index, std::chrono::milliseconds{500}));
            if (r.sessions.empty())
                co_return;
            index = r.meta.index;
        }
    }

    ~recipes_fixture() {
        if (!server.isolated())
            return;
        std::pair<std::size_t, std::size_t> left{0, 0};
        auto check = [this]() -> asio::awaitable<std::pair<std::size_t, std::size_t>> {
            co_await wait_no_sessions(std::chrono::milliseconds{3000});
            co_return co_await leftovers();
        };
        try {
            left = run(ioc, check(), std::chrono::milliseconds{5000});
        } catch (...) {
            left = {~std::size_t{0}, ~std::size_t{0}};
        }
        CHECK(left.first == 0);  // sessions left behind
        CHECK(left.second == 0); // keys left behind
    }
};

} // namespace conclave::test
