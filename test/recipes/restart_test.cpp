// SPDX-License-Identifier: BSL-1.0
// A server that restarts with empty state while a grant is held (a dev agent, or a Consul
// whose data is gone): its sessions and keys are gone, so the holder must learn that its
// grant is lost within its session's TTL, and must not disturb whoever holds it next.
#include "recipes_fixture.hpp"

#include <conclave/lock.hpp>
#include <conclave/semaphore.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

using steady = std::chrono::steady_clock;
constexpr auto ttl = 3s;

// Renews `s` until it is lost or destroyed, as a holder does.
void keep_renewing(asio::io_context& ioc, session s) {
    asio::co_spawn(ioc, s.async_run(asio::as_tuple(asio::use_awaitable)), asio::detached);
}

bool is_loss(const error_code& ec) {
    return ec == errc::lock_lost || ec == errc::session_invalidated || ec == errc::session_expired;
}

} // namespace

TEST_CASE_METHOD(recipes_fixture,
                 "after a server restart with empty state, a lock holder learns its loss within "
                 "the TTL and its release leaves the next holder alone",
                 "[lock][lost][restart]") {
    if (!server.isolated()) {
        std::printf("CONCLAVE-SKIPPED: restarts the server\n");
        return;
    }
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(ttl));
        keep_renewing(ioc, s);
        lock mutex{consul, p + "l"};
        auto lease = co_await mutex.async_acquire(s);
        const auto reset_at = steady::now();
        server.reset_state(); // (a real Consul: killed, started again with no data)
        const auto reset_done = steady::now();
        auto [ec] = co_await lease.async_wait_lost(awaitable_tuple);
        INFO(ec.message());
        CHECK(is_loss(ec));
        // The local deadline: no renewal reached the server for a TTL (the client's
        // timers could not run while the reset blocked this thread).
        CHECK(steady::now() <= std::max(reset_done, reset_at + ttl) + 2s);
        CHECK_FALSE(lease.held());

        // Someone else takes the lock on the new server; the old grant's release and the
        // old session's end must leave that hold as it is.
        auto s2 = co_await session::async_create(consul, quick(ttl));
        keep_renewing(ioc, s2);
        lock other{consul, p + "l"};
        auto next = co_await other.async_acquire(s2);
        co_await lease.async_release(awaitable_tuple);
        co_await s.async_destroy(awaitable_tuple);
        const auto now_held = co_await consul.async_kv_get(p + "l");
        REQUIRE(now_held.entry);
        CHECK(now_held.entry->session == s2.id());
        CHECK(next.held());
        co_await next.async_release();
        co_await other.async_destroy();
        co_await s2.async_destroy();
    };
    run(ioc, body(), 90s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "after a server restart with empty state, a semaphore permit holder learns its "
                 "loss within the TTL",
                 "[semaphore][lost][restart]") {
    if (!server.isolated()) {
        std::printf("CONCLAVE-SKIPPED: restarts the server\n");
        return;
    }
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(ttl));
        keep_renewing(ioc, s);
        semaphore sem{consul, p + "jobs", 2};
        auto permit = co_await sem.async_acquire(s);
        const auto reset_at = steady::now();
        server.reset_state();
        const auto reset_done = steady::now();
        auto [ec] = co_await permit.async_wait_lost(awaitable_tuple);
        INFO(ec.message());
        CHECK(is_loss(ec));
        CHECK(steady::now() <= std::max(reset_done, reset_at + ttl) + 2s);
        co_await permit.async_release(awaitable_tuple);
        co_await sem.async_destroy(awaitable_tuple);
        co_await s.async_destroy(awaitable_tuple);
    };
    run(ioc, body(), 90s);
}
