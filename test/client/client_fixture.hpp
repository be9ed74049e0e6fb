// SPDX-License-Identifier: BSL-1.0
// Shared setup of the client integration tests: a backend (dev agent or external Consul),
// a client on it, and helpers.
#pragma once

#include "support/backend.hpp"
#include "support/run.hpp"

#include <conclave/client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave::test {

inline constexpr auto tuple_token = asio::as_tuple(asio::deferred);

struct client_fixture {
    asio::io_context ioc;
    backend server{ioc};
    client consul{ioc.get_executor(), server.client_config()};
    std::string p = server.prefix(); ///< this test's key prefix

    /// Sessions this test created; destroyed at the end so nothing leaks into other tests.
    std::vector<std::string> sessions;

    asio::awaitable<std::string> new_session(session_options o = {}) {
        if (!o.node_checks)
            o.node_checks = std::vector<std::string>{};
        auto id = co_await consul.async_session_create(std::move(o));
        sessions.push_back(id);
        co_return id;
    }

    asio::awaitable<void> sleep(std::chrono::milliseconds d) {
        asio::steady_timer t{ioc, d};
        co_await t.async_wait(asio::deferred);
    }

    ~client_fixture() {
        auto cleanup = [this]() -> asio::awaitable<void> {
            co_await consul.async_kv_delete(p, kv_delete_options{}.with_recurse(true), tuple_token);
            for (const auto& id : sessions)
                co_await consul.async_session_destroy(id, {}, tuple_token);
        };
        try {
            run(ioc, cleanup(), std::chrono::milliseconds{5000});
        } catch (...) {
        }
    }
};

} // namespace conclave::test
