// SPDX-License-Identifier: BSL-1.0
// Fair mode: waiters of several processes (here: several clients, each with its own hub,
// as separate processes would have) are served in arrival order via contender keys.
#include "recipes/lock/key_hub.hpp"
#include "recipes_fixture.hpp"

#include <conclave/lock.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

lock_options fair() {
    return lock_options{}.with_fair();
}

// Waits until a contender is in line on `key` (its contender key exists) and the fair-mode
// hub of `c` on `key` has read a state that includes it: a release on `c` then decides on a
// view that shows that contender.
asio::awaitable<void> seen_in_line(client c, std::string key) {
    auto queue = co_await c.async_kv_list(key + "/.queue/");
    while (queue.entries.empty())
        queue = co_await c.async_kv_list(key + "/.queue/",
                                         query_options::blocking(queue.meta.index, 1s));
    conclave::detail::key_hub::settings fair_hub;
    fair_hub.fair = true;
    auto hub = conclave::detail::key_hub::of(c, key, fair_hub);
    while (hub->state_index() < queue.meta.index)
        co_await hub->changed.wait(std::chrono::steady_clock::now() + 1s);
}

} // namespace

TEST_CASE_METHOD(recipes_fixture, "fair mode serves waiters of two processes in arrival order",
                 "[lock][fair]") {
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t waiters = 6;
        client other{ioc.get_executor(), server.client_config()}; // "another process"
        auto holder_session = co_await session::async_create(consul, quick(5s));
        lock holder_lock{consul, p + "f", fair()};
        auto held = co_await holder_lock.async_acquire(holder_session);

        std::vector<session> sessions(waiters);
        std::vector<std::unique_ptr<lock>> locks;
        for (std::size_t i = 0; i < waiters; ++i) {
            client& c = i % 2 == 0 ? consul : other; // alternate between the processes
            sessions[i] = co_await session::async_create(c, quick(5s));
            locks.push_back(std::make_unique<lock>(c, p + "f", fair()));
        }
        std::vector<std::size_t> order;
        countdown done{ioc.get_executor(), waiters};
        auto one = [&](std::size_t i) -> asio::awaitable<void> {
            auto lease = co_await locks[i]->async_acquire(sessions[i]);
            order.push_back(i);
            co_await lease.async_release();
            done.count_down();
        };
        for (std::size_t i = 0; i < waiters; ++i) {
            asio::co_spawn(ioc, one(i), asio::detached);
            // Arrival = the contender key's CreateIndex: wait until it is written.
            for (std::size_t seen = 0; seen < i + 1;) {
                auto listed = co_await consul.async_kv_keys(p + "f/.queue/");
                seen = listed.keys.size();
                if (seen < i + 1)
                    co_await sleep(5ms);
            }
        }
        co_await held.async_release();
        co_await done.wait();
        std::vector<std::size_t> expected(waiters);
        for (std::size_t i = 0; i < waiters; ++i)
            expected[i] = i;
        CHECK(order == expected);
        auto queue = co_await consul.async_kv_keys(p + "f/.queue/");
        CHECK(queue.keys.empty()); // every contender key left with its waiter
        for (auto& s : sessions)
            co_await s.async_destroy();
        co_await holder_lock.async_destroy();
        co_await holder_session.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "fair mode: contenders of two processes re-acquiring in a loop take turns",
                 "[lock][fair]") {
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t n = 4;
        constexpr int rounds = 8;
        client other{ioc.get_executor(), server.client_config()};
        std::vector<session> sessions(n);
        std::vector<std::unique_ptr<lock>> locks;
        for (std::size_t i = 0; i < n; ++i) {
            client& c = i % 2 == 0 ? consul : other;
            sessions[i] = co_await session::async_create(c, quick(5s));
            locks.push_back(std::make_unique<lock>(c, p + "f", fair()));
        }
        std::vector<std::size_t> grants;
        countdown finished{ioc.get_executor(), n};
        auto loop = [&](std::size_t i) -> asio::awaitable<void> {
            for (int r = 0; r < rounds; ++r) {
                auto lease = co_await locks[i]->async_acquire(sessions[i]);
                grants.push_back(i);
                co_await lease.async_release();
            }
            finished.count_down();
        };
        for (std::size_t i = 0; i < n; ++i)
            asio::co_spawn(ioc, loop(i), asio::detached);
        co_await finished.wait();
        REQUIRE(grants.size() == n * rounds);
        // Nobody gets the lock twice while another contender of either process waits:
        // between two grants to one contender, every other one got it. Counted from the
        // first grant after every contender had one (before it, not everyone was in line
        // yet: on a loaded machine a contender's first key may come late) until the first
        // contender is done (after it, not everyone is in line any more).
        std::vector<int> count(n, 0);
        std::vector<int> since(n, 0); // grants since everyone was in line
        bool all_in = false;
        int most_ahead = 0;
        for (auto g : grants) {
            if (++count[g] == rounds)
                break;
            if (!all_in) {
                all_in = std::all_of(count.begin(), count.end(), [](int c) { return c > 0; });
                continue;
            }
            ++since[g];
            const auto [lo, hi] = std::minmax_element(since.begin(), since.end());
            most_ahead = std::max(most_ahead, *hi - *lo);
        }
        CHECK(all_in);
        CHECK(most_ahead <= 2);
        for (auto& s : sessions)
            co_await s.async_destroy();
        lock cleanup{consul, p + "f"};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "fair mode: a contender whose session is gone is skipped and pruned",
                 "[lock][fair]") {
    auto body = [&]() -> asio::awaitable<void> {
        // A contender key left by a session that ended (behavior release keeps the key).
        auto dead = co_await session::async_create(consul, quick(5s));
        co_await consul.async_kv_put(p + "f/.queue/" + dead.id() + ".1", "",
                                     kv_put_options{}.with_acquire(dead.id()));
        co_await dead.async_destroy();

        auto s = co_await session::async_create(consul, quick(5s));
        lock mutex{consul, p + "f", fair()};
        auto lease = co_await mutex.async_try_acquire(s, 2s);
        REQUIRE(lease);
        co_await lease->async_release();
        // Pruned in the background: follow the queue until it is empty (bounded).
        auto queue = co_await consul.async_kv_list(p + "f/.queue/");
        for (int i = 0; i < 10 && !queue.entries.empty(); ++i)
            queue = co_await consul.async_kv_list(p + "f/.queue/",
                                                  query_options::blocking(queue.meta.index, 1s));
        CHECK(queue.entries.empty());
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "fair mode: a cancelled or timed-out waiter leaves the line",
                 "[lock][fair][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(5s));
        auto b = co_await session::async_create(consul, quick(5s));
        lock mutex_a{consul, p + "f", fair()};
        lock mutex_b{consul, p + "f", fair()};
        auto held = co_await mutex_a.async_acquire(a);
        auto timed_out = co_await mutex_b.async_try_acquire(b, 200ms);
        CHECK_FALSE(timed_out);
        auto waiting = co_await (mutex_b.async_acquire(b, awaitable_tuple) || sleep(200ms));
        CHECK(waiting.index() == 1); // cancelled by ||
        auto queue = co_await consul.async_kv_keys(p + "f/.queue/");
        CHECK(queue.keys.empty());
        co_await held.async_release();
        co_await mutex_a.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "fair mode: a release hands the key to the next waiter of another process "
                 "in the same transaction",
                 "[lock][fair][hub]") {
    auto body = [&]() -> asio::awaitable<void> {
        client other{ioc.get_executor(), server.client_config()}; // "another process"
        auto a = co_await session::async_create(consul, quick(5s));
        auto b = co_await session::async_create(other, quick(5s));
        lock mine{consul, p + "f", fair()};
        lock theirs{other, p + "f", fair().with_value("b:8080")};
        auto held = co_await mine.async_acquire(a);
        // The holder watches its lease, as holders do: its hub's query stays current.
        auto watching = held.async_wait_lost(asio::deferred);
        asio::co_spawn(ioc, std::move(watching)(awaitable_tuple), asio::detached);

        lock_lease got;
        countdown acquired{ioc.get_executor(), 1};
        auto wait_b = [&]() -> asio::awaitable<void> {
            got = co_await theirs.async_acquire(b);
            acquired.count_down();
        };
        asio::co_spawn(ioc, wait_b(), asio::detached);
        co_await seen_in_line(consul, p + "f");

        server.reset_stats();
        co_await held.async_release();
        co_await acquired.wait();
        const auto stats = server.stats();
        CHECK(count(stats, "PUT /v1/txn") == 1); // the release; b wrote nothing
        CHECK(count(stats, "PUT /v1/kv") == 0);
        CHECK(count(stats, "DELETE /v1/kv") == 0);
        CHECK(got.token().session == b.id());
        auto entry = co_await consul.async_kv_get(p + "f");
        REQUIRE(entry.entry);
        CHECK(entry.entry->session == b.id());
        CHECK(entry.entry->value == "b:8080"); // b's value, carried by its contender key
        CHECK(entry.entry->flags == lock_flag_value);
        CHECK(got.token().modify_index == entry.entry->modify_index);
        auto queue = co_await consul.async_kv_list(p + "f/.queue/");
        CHECK(queue.entries.empty());

        co_await got.async_release();
        co_await mine.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "fair mode: a waiter of another process cancelled around the handoff "
                 "never holds the key after reporting failure",
                 "[lock][fair][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        client other{ioc.get_executor(), server.client_config()};
        auto a = co_await session::async_create(consul, quick(5s));
        auto b = co_await session::async_create(other, quick(5s));
        lock mine{consul, p + "f", fair()};
        lock theirs{other, p + "f", fair()};
        // The cancellation lands at different moments of the handoff in different rounds:
        // before b's query saw it, while b takes it, after.
        for (int round = 0; round < 6; ++round) {
            auto held = co_await mine.async_acquire(a);
            auto watching = held.async_wait_lost(asio::deferred);
            asio::co_spawn(ioc, std::move(watching)(awaitable_tuple), asio::detached);
            asio::cancellation_signal cancel;
            std::optional<std::pair<error_code, lock_lease>> outcome;
            countdown ended{ioc.get_executor(), 1};
            auto wait_b = [&]() -> asio::awaitable<void> {
                auto token = asio::bind_cancellation_slot(cancel.slot(), awaitable_tuple);
                auto [ec, lease] = co_await theirs.async_acquire(b, token);
                outcome.emplace(ec, std::move(lease));
                ended.count_down();
            };
            asio::co_spawn(ioc, wait_b(), asio::detached);
            co_await seen_in_line(consul, p + "f");

            co_await held.async_release();
            for (int turn = 0; turn < round; ++turn) // let the handoff progress a little
                co_await asio::post(ioc, asio::use_awaitable);
            if (!outcome)
                cancel.emit(asio::cancellation_type::terminal);
            co_await ended.wait();
            REQUIRE(outcome);
            auto entry = co_await consul.async_kv_get(p + "f");
            const bool b_holds = entry.entry && entry.entry->session == b.id();
            if (outcome->first) {
                CHECK(outcome->first == asio::error::operation_aborted);
                CHECK_FALSE(b_holds); // cancellation never looks like success
            } else {
                CHECK(b_holds);
                co_await outcome->second.async_release();
            }
            auto queue = co_await consul.async_kv_list(p + "f/.queue/");
            CHECK(queue.entries.empty());
        }
        co_await mine.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "fair mode: a second acquire by the holding session that gives up leaves the "
                 "first lease held",
                 "[lock][fair]") {
    auto body = [&]() -> asio::awaitable<void> {
        client other{ioc.get_executor(), server.client_config()};
        auto a = co_await session::async_create(consul, quick(5s));
        auto b = co_await session::async_create(other, quick(5s));
        lock mine{consul, p + "f", fair()};
        lock again{consul, p + "f", fair()};
        lock theirs{other, p + "f", fair()};
        auto held = co_await mine.async_acquire(a);
        auto watching = held.async_wait_lost(asio::deferred); // keeps a's hub current
        asio::co_spawn(ioc, std::move(watching)(awaitable_tuple), asio::detached);
        // b is first in line, so a's second acquire waits behind it and gives up.
        asio::cancellation_signal stop_b;
        countdown b_ended{ioc.get_executor(), 1};
        auto wait_b = [&]() -> asio::awaitable<void> {
            auto token = asio::bind_cancellation_slot(stop_b.slot(), awaitable_tuple);
            co_await theirs.async_acquire(b, token);
            b_ended.count_down();
        };
        asio::co_spawn(ioc, wait_b(), asio::detached);
        co_await seen_in_line(consul, p + "f");
        auto second = co_await again.async_try_acquire(a, 100ms);
        CHECK_FALSE(second);
        // Its cleanup must not take the key from the first lease of the same session.
        auto entry = co_await consul.async_kv_get(p + "f");
        REQUIRE(entry.entry);
        CHECK(entry.entry->session == a.id());
        CHECK(held.held());
        stop_b.emit(asio::cancellation_type::terminal);
        co_await b_ended.wait();
        co_await held.async_release();
        co_await b.async_destroy();
        co_await mine.async_destroy();
        co_await a.async_destroy();
    };
    run(ioc, body());
}
