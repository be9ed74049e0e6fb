// SPDX-License-Identifier: BSL-1.0
// Consul's rules for blocking queries, held by the recipes' shared queries against a
// misbehaving server (a fault proxy answering blocking reads at once, with X-Consul-Index 0
// or with the index asked): an index below 1 counts as 1, and reads answered without news
// are spaced out, so a held lock's or permit's monitor, or a waiter, never spins.
#include "proxied_fixture.hpp"

#include <conclave/lock.hpp>
#include <conclave/semaphore.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

// The proxied client, with what the proxy answered at once.
struct index_fixture : proxied_fixture {
    std::uint64_t answered_at_once() const {
        const auto s = proxy.stats();
        const auto it = s.by_endpoint.find("GET (answered at once)");
        return it == s.by_endpoint.end() ? 0 : it->second;
    }

    // Blocking reads answered at once during `window` (the monitors keep reading). Without
    // the pacing a loop re-reads hundreds of times a second; with it, the pauses double
    // from 50 ms up to 2 s, so a 2 s window holds about half a dozen.
    asio::awaitable<std::uint64_t> at_once_during(fault_proxy::index_fault f,
                                                  std::chrono::milliseconds window) {
        proxy.misbehave_blocking("/v1/kv/" + p, f);
        const auto before = answered_at_once();
        co_await sleep(window); // the window measured, not a synchronisation
        proxy.misbehave_blocking("/v1/kv/" + p, fault_proxy::index_fault::none);
        co_return answered_at_once() - before;
    }
};

constexpr std::uint64_t spinning = 40; // in 2 s: well above paced, well below a spin

} // namespace

TEST_CASE_METHOD(index_fixture,
                 "a held lock's monitor does not spin when blocking reads come back at once "
                 "with index 0 or the same index",
                 "[lock][index]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(through, quick(10s));
        lock mutex{through, p + "l"};
        auto lease = co_await mutex.async_acquire(s);
        bool lost = false;
        auto monitor = [&]() -> asio::awaitable<void> {
            co_await lease.async_wait_lost(awaitable_tuple);
            lost = true;
        };
        auto measure = [&]() -> asio::awaitable<void> {
            for (auto f : {fault_proxy::index_fault::zero, fault_proxy::index_fault::same}) {
                const auto n = co_await at_once_during(f, 2s);
                CHECK(n > 0); // the monitor did read through the fault
                CHECK(n < spinning);
            }
            CHECK_FALSE(lost); // nothing changed: the lock is still held
            // Back to a sane server: the monitor still hears a change (the key deleted),
            // within its longest pause.
            co_await through.async_kv_delete(p + "l");
        };
        auto both = co_await (monitor() || (measure() && sleep(10s)));
        CHECK(both.index() == 0); // the loss was heard before the bound
        CHECK(lost);
        co_await s.async_destroy();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(index_fixture,
                 "a held permit's monitor and a waiter do not spin on blocking reads answered "
                 "at once",
                 "[semaphore][index]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(through, quick(10s));
        auto b = co_await session::async_create(through, quick(10s));
        semaphore sem_a{through, p + "jobs", 1};
        semaphore sem_b{through, p + "jobs", 1};
        auto held = co_await sem_a.async_acquire(a);
        bool granted = false;
        permit got;
        auto waiter = [&]() -> asio::awaitable<void> {
            got = co_await sem_b.async_acquire(b);
            granted = true;
        };
        auto measure = [&]() -> asio::awaitable<void> {
            for (auto f : {fault_proxy::index_fault::zero, fault_proxy::index_fault::same}) {
                const auto n = co_await at_once_during(f, 2s);
                CHECK(n > 0);
                CHECK(n < spinning);
            }
            CHECK_FALSE(granted);
            CHECK(held.held());
            co_await held.async_release(); // the waiter hears it within its longest pause
        };
        auto both = co_await (waiter() || (measure() && sleep(10s)));
        CHECK(both.index() == 0);
        REQUIRE(granted);
        co_await got.async_release();
        co_await sem_a.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body(), 30s);
}
