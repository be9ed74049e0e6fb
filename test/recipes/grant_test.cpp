// SPDX-License-Identifier: BSL-1.0
// One grant vocabulary: a lock lease, a permit and a leadership are each a conclave::grant,
// so code that watches or ends a grant is written once for all three.
#include "recipes_fixture.hpp"

#include <conclave/elector.hpp>
#include <conclave/grant.hpp>
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
