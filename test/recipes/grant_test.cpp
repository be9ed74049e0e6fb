// SPDX-License-Identifier: BSL-1.0
// One grant vocabulary: a lock lease, a permit and a leadership are each a conclave::grant,
// so code that watches or ends a grant is written once for all three.
#include "recipes_fixture.hpp"

#include <conclave/elector.hpp>
#include <conclave/grant.hpp>
#include <conclave/hold_scope.hpp>
#include <conclave/semaphore.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

// What every grant offers, through the base class only: held, health, remaining, then the
// loss when the session goes, and a release that succeeds once lost.
asio::awaitable<error_code> watch_until_lost(const grant& g, session& s) {
    CHECK(g.valid());
    CHECK(g.held() == g.token());
    CHECK(g.health() == hold_health::held);
    CHECK(g.remaining() > 0s);
    auto lost = [&]() -> asio::awaitable<error_code> {
        auto [ec] = co_await g.async_wait_lost(asio::as_tuple(asio::use_awaitable));
        co_return ec;
    };
    auto end_session = [&]() -> asio::awaitable<void> { co_await s.async_destroy(); };
    const error_code ec = co_await (lost() && end_session());
    CHECK_FALSE(g.held());
    CHECK(g.health() == hold_health::lost);
    CHECK(g.remaining() == 0s);
    co_await g.async_release(); // retry-safe: nothing left to release
    co_return ec;
}

} // namespace

TEST_CASE_METHOD(recipes_fixture, "a lock lease, a permit and a leadership are each a grant",
                 "[grant]") {
    auto body = [&]() -> asio::awaitable<void> {
        {
            auto s = co_await session::async_create(consul, quick(10s));
            lock mutex{consul, p + "lock"};
            lock_lease lease = co_await mutex.async_acquire(s);
            const error_code ec = co_await watch_until_lost(lease, s);
            CHECK(ec); // the loss, never success
        }
        {
            auto s = co_await session::async_create(consul, quick(10s));
            semaphore sem{consul, p + "pool", 2};
            permit slot = co_await sem.async_acquire(s);
            const error_code ec = co_await watch_until_lost(slot, s);
            CHECK(ec);
            co_await sem.async_destroy();
        }
        {
            auto s = co_await session::async_create(consul, quick(10s));
            elector el{consul, p + "leader"};
            leadership term = co_await el.async_campaign(s);
            const lock_lease& as_lease = term.lease(); // a leadership is a lock lease too
            CHECK(as_lease.token() == term.token());
            const error_code ec = co_await watch_until_lost(term, s);
            CHECK(ec);
        }
        // The keys the lock and the elector leave (Go's api.Lock keeps a released key).
        co_await consul.async_kv_delete(p + "lock");
        co_await consul.async_kv_delete(p + "leader");
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(recipes_fixture, "an operation on an empty grant completes with invalid_argument",
                 "[grant]") {
    const grant nothing;
    CHECK_FALSE(nothing.valid());
    CHECK_FALSE(nothing.held());
    CHECK(nothing.health() == hold_health::lost);
    CHECK(nothing.remaining() == 0s);
    auto body = [&]() -> asio::awaitable<void> {
        auto [released] = co_await nothing.async_release(asio::as_tuple(asio::use_awaitable));
        CHECK(released == errc::invalid_argument);
        auto [lost] = co_await nothing.async_wait_lost(asio::as_tuple(asio::use_awaitable));
        CHECK(lost == errc::invalid_argument);
        lock_lease no_lease;
        auto [guarded, t] =
            co_await no_lease.async_guarded_txn({}, asio::as_tuple(asio::use_awaitable));
        CHECK(guarded == errc::invalid_argument);
        CHECK_FALSE(t.committed);
    };
    run(ioc, body(), 5s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "a re-entrant lock gives an acquire with the holding session the same lease, "
                 "and only the last release frees the key",
                 "[grant][reentrant]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "lock", lock_options{}.with_reentrant()};
        auto outer = co_await mutex.async_acquire(s);
        CHECK(outer.hold_count() == 1);
        auto written = co_await consul.async_kv_get(mutex.key());
        REQUIRE(written.entry);

        // One attempt is enough: the lease is joined, not waited for.
        auto inner = co_await mutex.async_try_acquire(s, 0ms);
        REQUIRE(inner);
        CHECK(inner->token() == outer.token());
        CHECK(outer.hold_count() == 2);
        auto again = co_await mutex.async_acquire(s);
        CHECK(again.token() == outer.token());
        CHECK(outer.hold_count() == 3);
        auto unchanged = co_await consul.async_kv_get(mutex.key());
        REQUIRE(unchanged.entry);
        CHECK(unchanged.entry->modify_index == written.entry->modify_index); // no write

        co_await again.async_release();
        co_await inner->async_release();
        CHECK(outer.hold_count() == 1);
        CHECK(outer.held());
        auto still = co_await consul.async_kv_get(mutex.key());
        REQUIRE(still.entry);
        CHECK(still.entry->session == s.id()); // still held in Consul

        co_await outer.async_release();
        CHECK(outer.hold_count() == 0);
        CHECK_FALSE(outer.held());
        auto freed = co_await consul.async_kv_get(mutex.key());
        REQUIRE(freed.entry);
        CHECK(freed.entry->session.empty());
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "without re-entrancy an acquire with the holding session waits for the lease "
                 "to end",
                 "[grant][reentrant]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "lock"};
        auto outer = co_await mutex.async_acquire(s);
        auto inner = co_await mutex.async_try_acquire(s, 0ms);
        CHECK_FALSE(inner);
        CHECK(outer.hold_count() == 1);
        co_await outer.async_release();
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "a re-entrant acquire does not join a lease whose last release has begun",
                 "[grant][reentrant]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "lock", lock_options{}.with_reentrant()};
        auto first = co_await mutex.async_acquire(s);
        auto release = [&]() -> asio::awaitable<void> { co_await first.async_release(); };
        auto acquire = [&]() -> asio::awaitable<lock_lease> {
            co_return co_await mutex.async_acquire(s);
        };
        // The release begins first (operator&& starts its operands in order).
        auto next = co_await (release() && acquire());
        CHECK_FALSE(first.held());
        CHECK(next.held());
        CHECK(next.hold_count() == 1);
        CHECK(next.token().modify_index > first.token().modify_index); // a grant of its own
        co_await next.async_release();
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(recipes_fixture, "nested with_lock scopes on a re-entrant lock run both bodies",
                 "[grant][reentrant]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "lock", lock_options{}.with_reentrant()};
        unsigned depth = 0;
        co_await with_lock(mutex, s, [&](lock_lease outer) -> asio::awaitable<void> {
            co_await with_lock(mutex, s, [&](lock_lease inner) -> asio::awaitable<void> {
                CHECK(inner.token() == outer.token());
                CHECK(inner.hold_count() == 2);
                depth = 2;
                co_return;
            });
            CHECK(outer.hold_count() == 1);
            CHECK(outer.held());
        });
        CHECK(depth == 2);
        auto freed = co_await consul.async_kv_get(mutex.key());
        REQUIRE(freed.entry);
        CHECK(freed.entry->session.empty());
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "a re-entrant semaphore gives an acquire with the holding session the same "
                 "permit, and only the last release frees the slot",
                 "[grant][reentrant]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        semaphore sem{consul, p + "pool", 2, semaphore_options{}.with_reentrant()};
        auto outer = co_await sem.async_acquire(s);
        auto inner = co_await sem.async_try_acquire(s, 0ms);
        REQUIRE(inner);
        CHECK(inner->token() == outer.token());
        CHECK(outer.hold_count() == 2);
        co_await inner->async_release();
        CHECK(outer.held());
        auto record = co_await consul.async_kv_get(sem.prefix() + "/.lock");
        REQUIRE(record.entry);
        CHECK(record.entry->value == R"({"Limit":2,"Holders":{")" + s.id() + R"(":true}})");
        co_await outer.async_release();
        auto keys = co_await consul.async_kv_keys(sem.prefix() + "/");
        CHECK(keys.keys == std::vector<std::string>{sem.prefix() + "/.lock"});
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body(), 30s);
}
