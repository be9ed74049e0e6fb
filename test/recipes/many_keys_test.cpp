// SPDX-License-Identifier: BSL-1.0
// Lock waiters on more keys than a client's blocking queries may hold each hear their key's
// release: the reads beyond that share share their folder's query (see shared_key_read.hpp).
#include "recipes_fixture.hpp"

#include <conclave/lock.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <functional>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

TEST_CASE_METHOD(recipes_fixture,
                 "lock waiters on more keys than the blocking queries' share each get their lock "
                 "when it is released",
                 "[lock][connections]") {
    constexpr int keys = 12;
    auto cfg = server.client_config();
    cfg.max_connections = 4; // three for blocking queries, two of them for reads of their own
    client small{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(small, quick());
        std::vector<std::unique_ptr<lock>> held_by_a, wanted_by_b;
        std::vector<lock_lease> leases_a(keys), leases_b(keys);
        for (int i = 0; i < keys; ++i) {
            const auto key = p + "l" + std::to_string(i);
            held_by_a.push_back(std::make_unique<lock>(consul, key));
            wanted_by_b.push_back(std::make_unique<lock>(small, key));
            leases_a[i] = co_await held_by_a[i]->async_acquire(a);
        }
        // Two blocking reads no write wakes (an index no key reaches) fill the reads of
        // their own: a waiter queued behind them would not hear its release in time.
        asio::cancellation_signal crowd_stop[2];
        int crowd_done = 0;
        for (int i = 0; i < 2; ++i)
            asio::co_spawn(
                ioc,
                small.async_kv_get(p + "own" + std::to_string(i),
                                   query_options::blocking(1ull << 60, 120s),
                                   asio::as_tuple(asio::use_awaitable)),
                asio::bind_cancellation_slot(crowd_stop[i].slot(),
                                             [&](std::exception_ptr, auto) { ++crowd_done; }));
        int granted = 0;
        asio::steady_timer all_granted{ioc, 1h}; // cancelled by the last waiter
        auto wait = [&](int i) -> asio::awaitable<void> {
            leases_b[i] = co_await wanted_by_b[i]->async_acquire(b, asio::use_awaitable);
            if (++granted == keys)
                all_granted.cancel();
        };
        for (int i = 0; i < keys; ++i)
            asio::co_spawn(ioc, wait(i), asio::detached);
        while (small.stats().shared_key_reads == 0) {
            asio::steady_timer poll{ioc, 2ms}; // (no event tells when a read has joined)
            co_await poll.async_wait(asio::use_awaitable);
        }
        for (auto& lease : leases_a)
            co_await lease.async_release();
        if (granted < keys)
            co_await all_granted.async_wait(asio::as_tuple(asio::use_awaitable));
        for (int i = 0; i < keys; ++i) {
            CHECK(leases_b[i].token().session == b.id());
            co_await leases_b[i].async_release();
            co_await wanted_by_b[i]->async_destroy();
        }
        co_await a.async_destroy();
        co_await b.async_destroy();
        for (auto& stop : crowd_stop)
            stop.emit(asio::cancellation_type::terminal);
        while (crowd_done < 2) {
            asio::steady_timer poll{ioc, 2ms};
            co_await poll.async_wait(asio::use_awaitable);
        }
    };
    run(ioc, body(), 60s);
}
