// SPDX-License-Identifier: BSL-1.0
// hold_health: held -> jeopardy (renewals failing or late) -> lost, remaining(), and
// async_wait_health_change on sessions and the grants held with them.
#include "recipes_fixture.hpp"

#include <conclave/lock.hpp>
#include <conclave/semaphore.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using steady = std::chrono::steady_clock;

TEST_CASE_METHOD(recipes_fixture,
                 "a failed renewal puts the session in jeopardy until one succeeds", "[health]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(4s));
        CHECK(s.health() == hold_health::held);
        CHECK(s.remaining() > 3s);
        CHECK(s.remaining() <= 4s);
        lock mutex{consul, p + "l"};
        auto lease = co_await mutex.async_acquire(s);
        CHECK(lease.health() == hold_health::held);

        auto watch = [&]() -> asio::awaitable<void> {
            // The renewal at TTL/2 fails (500); the retry after TTL/16 succeeds.
            server.inject_errors("/v1/session/renew/", 1, 500);
            auto [ec, now] =
                co_await lease.async_wait_health_change(hold_health::held, awaitable_tuple);
            CHECK_FALSE(ec);
            CHECK(now == hold_health::jeopardy);
            CHECK(s.health() == hold_health::jeopardy);
            CHECK(lease.held()); // still held: jeopardy is a warning, not a loss
            CHECK(lease.remaining() > 0s);
            CHECK(lease.remaining() <= 2s); // half the TTL or less was left
            auto [ec2, again] =
                co_await lease.async_wait_health_change(hold_health::jeopardy, awaitable_tuple);
            CHECK_FALSE(ec2);
            CHECK(again == hold_health::held);
            CHECK(lease.remaining() > 2s); // the deadline moved ahead
        };
        auto outcome = co_await (s.async_run(awaitable_tuple) || watch());
        CHECK(outcome.index() == 1);
        // Cancelling async_run ends the session, and every grant held with it.
        CHECK(s.health() == hold_health::lost);
        CHECK(s.remaining() == steady::duration::zero());
        CHECK(lease.health() == hold_health::lost);
        CHECK(lease.remaining() == steady::duration::zero());
        co_await lease.async_release();
        co_await mutex.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a session that is not renewed is in jeopardy at 5/8 of its TTL",
                 "[health]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto start = steady::now();
        auto s = co_await session::async_create(consul, quick(800ms));
        // No async_run: nothing renews it, the health changes with time alone.
        auto [ec, h] = co_await s.async_wait_health_change(hold_health::held, awaitable_tuple);
        CHECK_FALSE(ec);
        CHECK(h == hold_health::jeopardy);
        CHECK(steady::now() - start >= 500ms); // 800 ms - 3/8 of it
        auto [ec2, h2] =
            co_await s.async_wait_health_change(hold_health::jeopardy, awaitable_tuple);
        CHECK_FALSE(ec2);
        CHECK(h2 == hold_health::lost);
        CHECK(s.loss_reason() == errc::session_expired);
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a grant's health turns lost when it is released or lost",
                 "[health]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        semaphore sem{consul, p + "sem", 2};
        auto slot = co_await sem.async_acquire(s);
        CHECK(slot.health() == hold_health::held);
        auto release = [&]() -> asio::awaitable<int> {
            co_await slot.async_release();
            co_return 0;
        };
        auto wait_change = [&]() -> asio::awaitable<hold_health> {
            auto [ec, h] =
                co_await slot.async_wait_health_change(hold_health::held, awaitable_tuple);
            CHECK_FALSE(ec);
            co_return h;
        };
        auto [h, released] = co_await (wait_change() && release());
        (void)released;
        CHECK(h == hold_health::lost);
        CHECK(s.health() == hold_health::held); // the session is not affected

        lock mutex{consul, p + "l"};
        auto lease = co_await mutex.async_acquire(s);
        // Waiting from `lost` ends only by cancellation.
        co_await lease.async_release();
        auto outcome = co_await (
            lease.async_wait_health_change(hold_health::lost, awaitable_tuple) || sleep(100ms));
        CHECK(outcome.index() == 1);
        co_await mutex.async_destroy();
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}
