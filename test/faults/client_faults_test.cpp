// The client's error paths driven by the dev agent's private controls (dev-agent-only).
#include "../client/client_fixture.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <catch2/catch.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

TEST_CASE_METHOD(client_fixture, "injected 500s surface with Consul's text, then service resumes",
                 "[faults]") {
    if (skip_unless_dev_agent())
        return;
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "k", "v");
        server.agent()->inject_errors("/v1/kv/", 2, 500);
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
    if (skip_unless_dev_agent())
        return;
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "k", "v"); // leaves a keep-alive connection idle
        server.agent()->inject_disconnects("/v1/kv/", 1);
        auto r = co_await consul.async_kv_get(p + "k");
        CHECK(r.entry);
        CHECK(consul.stats().retries == 1);

        server.agent()->inject_disconnects("/v1/kv/", 1);
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
    if (skip_unless_dev_agent())
        return;
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await new_session(session_options{}.with_ttl(10s).with_lock_delay(0ms));
        const auto r0 = co_await consul.async_kv_put(p + "l", "", kv_put_options{}.with_acquire(s));
        CHECK(r0);
        CHECK(server.agent()->force_expire_session(s));
        auto [ec, entry] = co_await consul.async_session_renew(s, {}, tuple_token);
        CHECK(ec == errc::session_invalidated);
        auto key = co_await consul.async_kv_get(p + "l");
        REQUIRE(key.entry);
        CHECK(key.entry->session.empty());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "after an agent restart the index goes backwards", "[faults]") {
    if (skip_unless_dev_agent())
        return;
    auto body = [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 20; ++i)
            co_await consul.async_kv_put(p + "k" + std::to_string(i), "v");
        auto before = co_await consul.async_kv_get(p + "k19");
        server.agent()->reset_state();
        auto after = co_await consul.async_kv_get(p + "k19");
        CHECK_FALSE(after.entry);
        CHECK(after.meta.index >= 1);
        CHECK(after.meta.index < before.meta.index);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a blocking query ends when the agent restarts", "[faults]") {
    if (skip_unless_dev_agent())
        return;
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "k", "v");
        auto r = co_await consul.async_kv_get(p + "k");
        auto restarter = [&]() -> asio::awaitable<void> {
            co_await sleep(150ms);
            server.agent()->reset_state();
        };
        using namespace asio::experimental::awaitable_operators;
        const auto start = std::chrono::steady_clock::now();
        auto after = co_await (
            consul.async_kv_get(p + "k", query_options{}.with_index(r.meta.index).with_wait(10s),
                                asio::use_awaitable) &&
            restarter());
        CHECK(std::chrono::steady_clock::now() - start < 5s);
        CHECK_FALSE(after.entry);
        CHECK(after.meta.index < r.meta.index);
    };
    run(ioc, body());
}
