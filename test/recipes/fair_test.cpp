// Fair mode: waiters of several processes (here: several clients, each with its own hub,
// as separate processes would have) are served in arrival order via contender keys.
#include "recipes_fixture.hpp"

#include <conclave/lock.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <algorithm>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

lock_options fair() {
    return lock_options{}.with_fair();
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
        // between two grants to one contender, every other one got it (the first and last
        // rounds aside, when not everyone is in line yet or any more).
        std::vector<int> count(n, 0);
        int most_ahead = 0;
        for (auto g : grants) {
            ++count[g];
            const auto [lo, hi] = std::minmax_element(count.begin(), count.end());
            most_ahead = std::max(most_ahead, *hi - *lo);
        }
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
