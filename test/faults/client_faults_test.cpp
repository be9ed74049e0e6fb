// SPDX-License-Identifier: BSL-1.0
// The client's error paths, driven by the backend's fault controls (the embedded agent's, or
// the fault proxy's in front of a real Consul).
#include "../client/client_fixture.hpp"
#include "support/catch.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

TEST_CASE_METHOD(client_fixture, "injected 500s surface with Consul's text, then service resumes",
                 "[faults]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "k", "v");
        server.inject_errors("/v1/kv/", 2, 500);
        diagnostics diag;
        for (int i = 0; i < 2; ++i) {
            auto [ec, r] = co_await consul.async_kv_get(p + "k", query_options{}.with_diag(&diag),
                                                        tuple_token);
            CHECK(ec == errc::server_error);
            CHECK(is_retryable(ec));
            CHECK(diag.http_status == 500);
            CHECK_FALSE(diag.server_message.empty());
        }
        auto r = co_await consul.async_kv_get(p + "k");
        CHECK(r.entry);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a dropped connection: GET retried once, PUT reported",
                 "[faults]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "k", "v"); // leaves a keep-alive connection idle
        server.inject_disconnects("/v1/kv/", 1);
        auto r = co_await consul.async_kv_get(p + "k");
        CHECK(r.entry);
        CHECK(consul.stats().retries == 1);

        server.inject_disconnects("/v1/kv/", 1);
        auto [ec, ok] = co_await consul.async_kv_put(p + "k", "w", {}, tuple_token);
        CHECK(ec);
        CHECK(is_retryable(ec));
        CHECK(consul.stats().retries == 1);
        auto after = co_await consul.async_kv_get(p + "k");
        REQUIRE(after.entry);
        CHECK(after.entry->value == "v"); // the dropped write was not applied
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a forced session expiry makes renew report invalidation",
                 "[faults]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await new_session(session_options{}.with_ttl(10s).with_lock_delay(0ms));
        const auto r0 = co_await consul.async_kv_put(p + "l", "", kv_put_options{}.with_acquire(s));
        CHECK(r0);
        CHECK(server.expire_session(s));
        auto [ec, entry] = co_await consul.async_session_renew(s, {}, tuple_token);
        CHECK(ec == errc::session_invalidated);
        auto key = co_await consul.async_kv_get(p + "l");
        REQUIRE(key.entry);
        CHECK(key.entry->session.empty());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "after an agent restart the index goes backwards", "[faults]") {
    auto body = [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 20; ++i)
            co_await consul.async_kv_put(p + "k" + std::to_string(i), "v");
        auto before = co_await consul.async_kv_get(p + "k19");
        server.reset_state();
        auto after = co_await consul.async_kv_get(p + "k19");
        CHECK_FALSE(after.entry);
        CHECK(after.meta.index >= 1);
        CHECK(after.meta.index < before.meta.index);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a blocking query ends when the agent restarts", "[faults]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "k", "v");
        auto r = co_await consul.async_kv_get(p + "k");
        auto restarter = [&]() -> asio::awaitable<bool> {
            co_await sleep(150ms);
            server.reset_state();
            co_return true;
        };
        using namespace asio::experimental::awaitable_operators;
        const auto start = std::chrono::steady_clock::now();
        auto [ec, after, restarted] = co_await (
            consul.async_kv_get(p + "k", query_options{}.with_index(r.meta.index).with_wait(10s),
                                asio::as_tuple(asio::use_awaitable)) &&
            restarter());
        CHECK(restarted);
        CHECK(std::chrono::steady_clock::now() - start < 5s);
        if (ec) {
            // A real Consul's restart closes the connection under the query: a retryable
            // error, never a hang until the wait ends.
            CHECK(is_retryable(ec));
        } else {
            // The embedded agent answers it with the empty state.
            CHECK_FALSE(after.entry);
            CHECK(after.meta.index < r.meta.index);
        }
    };
    run(ioc, body());
}
