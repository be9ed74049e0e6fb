// SPDX-License-Identifier: BSL-1.0
// A process's view of a semaphore's prefix after a write of its own: the write says what
// `.lock` became, not what else changed under the prefix since the view was read (contender
// keys written, other holders added). A fault proxy holds the process's blocking reads back,
// so that its view stays as old as it can be between two reads.
#include "proxied_fixture.hpp"
#include "semaphore_waits.hpp"

#include <conclave/semaphore.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <algorithm>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

// A process whose reads of the prefix the test holds back.
struct view_fixture : proxied_fixture {
    // From here on the answers to the blocking reads of `prefix` by `through` are held back
    // (answered by Consul, not passed on), and one is under way (`held`'s monitor keeps the
    // process's query reading): the process's view stays as it is until release_held().
    asio::awaitable<bool> hold_reads(const std::string& prefix, permit& held) {
        proxy.hold_responses("/v1/kv/" + prefix, fault_proxy::path_match::prefix, true);
        held.async_wait_lost([](error_code) {});
        co_return co_await eventually(
            ioc, [&] { return proxy.stats().blocking_queries_waiting > 0 || proxy.held() > 0; });
    }
};

bool holds(const semaphore_status& s, const std::string& session) {
    return std::any_of(s.holders.begin(), s.holders.end(),
                       [&](const semaphore_holder& h) { return h.session == session; });
}

} // namespace

TEST_CASE_METHOD(view_fixture,
                 "fair mode: a waiter whose contender key was written before a release of its "
                 "process read it takes the freed slot",
                 "[semaphore][fair]") {
    // The release frees the slot (its view has nobody in line) and patches the view with its
    // write; the waiter, first in line, waits for a read that has its key. That read must
    // come at once, not with the prefix's next change, which nobody makes while everyone
    // leaves the slot to the waiter: with fair_patience and the query's wait far above the
    // test's bound, such a stall hangs the test.
    auto body = [&]() -> asio::awaitable<void> {
        const auto prefix = p + "patched";
        const auto opts = semaphore_options{}.with_fair().with_fair_patience(1h).with_wait(5min);
        auto holder = co_await session::async_create(through, quick(10s));
        auto waiter = co_await session::async_create(through, quick(10s));
        semaphore sem{through, prefix, 1, opts};
        auto held = co_await sem.async_acquire(holder);
        const bool reading = co_await hold_reads(prefix, held);
        REQUIRE(reading);

        granted_in_order g;
        g.acquire(ioc, sem, waiter, "waiter");
        co_await wait_in_line(consul, prefix, waiter.id());
        co_await held.async_release();
        proxy.release_held();
        const bool granted = co_await eventually(ioc, [&] { return !g.order.empty(); });
        REQUIRE(granted);
        co_await g.permits["waiter"]->async_release();
        co_await sem.async_destroy();
        co_await holder.async_destroy();
        co_await waiter.async_destroy();
    };
    run(ioc, body(), 60s);
}

TEST_CASE_METHOD(view_fixture,
                 "a release that lost a race and read .lock afresh does not let its process "
                 "prune a holder whose contender key it has not read",
                 "[semaphore]") {
    // The release's first check-and-set is refused (another process took a slot since the
    // view was read); it reads `.lock` again and frees its slot. That `.lock` lists the
    // other process's holder, whose contender key this process never read: patched into
    // the view, the holder would look dead, and the next acquire here would take its slot.
    auto body = [&]() -> asio::awaitable<void> {
        const auto prefix = p + "raced";
        const auto opts = semaphore_options{}.with_wait(5min);
        auto mine = co_await session::async_create(through, quick(10s));
        auto next = co_await session::async_create(through, quick(10s));
        auto other = co_await session::async_create(consul, quick(10s));
        semaphore here{through, prefix, 2, opts};
        semaphore there{consul, prefix, 2, opts}; // another process
        auto held = co_await here.async_acquire(mine);
        const bool reading = co_await hold_reads(prefix, held);
        REQUIRE(reading);

        auto theirs = co_await there.async_acquire(other);
        co_await held.async_release();
        auto got = co_await here.async_acquire(next);
        const auto status = co_await there.async_status();
        CHECK(holds(status, other.id()));
        CHECK(holds(status, next.id()));
        proxy.release_held();
        co_await got.async_release();
        co_await theirs.async_release();
        co_await here.async_destroy();
        co_await mine.async_destroy();
        co_await next.async_destroy();
        co_await other.async_destroy();
    };
    run(ioc, body(), 60s);
}
