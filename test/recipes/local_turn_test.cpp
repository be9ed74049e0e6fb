// SPDX-License-Identifier: BSL-1.0
// Turns between processes without fair mode (lock_options::local_turn): a process whose
// waiters keep handing the key to each other leaves it to the others after a turn.
#include "recipes/lock/key_hub.hpp"
#include "recipes_fixture.hpp"

#include <conclave/lock.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <algorithm>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

// Ends the test's sessions and deletes its key.
asio::awaitable<void> clean_up(client& consul, const std::string& key,
                               std::vector<session>& sessions) {
    for (auto& s : sessions)
        co_await s.async_destroy();
    lock cleanup{consul, key};
    co_await cleanup.async_destroy();
}

} // namespace

TEST_CASE_METHOD(recipes_fixture,
                 "without fair mode, two processes re-acquiring in a loop take turns",
                 "[lock][turns]") {
    auto body = [&]() -> asio::awaitable<void> {
        // Two contenders per process: each release has a local waiter to hand the key to,
        // so without turns the first process to hold it keeps it.
        constexpr std::size_t per_process = 2;
        constexpr std::size_t wanted = 120;
        const auto options = lock_options{}.with_local_turn(4);
        client other{ioc.get_executor(), server.client_config()}; // "another process"
        std::vector<session> sessions;
        std::vector<std::unique_ptr<lock>> locks;
        for (std::size_t i = 0; i < 2 * per_process; ++i) {
            client& c = i % 2 == 0 ? consul : other;
            sessions.push_back(co_await session::async_create(c, quick(5s)));
            locks.push_back(std::make_unique<lock>(c, p + "t", options));
        }
        std::vector<std::size_t> grants; // the process (0, 1) of each grant
        countdown finished{ioc.get_executor(), sessions.size()};
        auto loop = [&](std::size_t i) -> asio::awaitable<void> {
            while (grants.size() < wanted) {
                // Bounded: a starved contender still ends once the others are done.
                auto lease = co_await locks[i]->async_try_acquire(sessions[i], 3s);
                if (!lease)
                    continue;
                grants.push_back(i % 2);
                co_await lease->async_release();
            }
            finished.count_down();
        };
        for (std::size_t i = 0; i < sessions.size(); ++i)
            asio::co_spawn(ioc, loop(i), asio::detached);
        co_await finished.wait();
        const auto first = std::size_t(std::count(grants.begin(), grants.end(), 0));
        const auto second = grants.size() - first;
        std::size_t switches = 0;
        for (std::size_t g = 1; g < grants.size(); ++g)
            switches += grants[g] != grants[g - 1] ? 1 : 0;
        INFO("grants: " << first << " and " << second << ", " << switches << " switches");
        // Turns of 4 grants: about 30 switches when every turn passes. Bounds that hold on
        // a loaded machine, where a waiter elsewhere may miss a turn's pause.
        CHECK(std::min(first, second) >= grants.size() / 5);
        CHECK(switches >= 6);
        co_await clean_up(consul, p + "t", sessions);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a process's turn ends after local_turn grants in a row, its own handoffs counted",
                 "[lock][turns]") {
    auto body = [&]() -> asio::awaitable<void> {
        // Two contenders of one process hand the key to each other: grants 1, 2 (a handoff),
        // 3 (a handoff); the third release ends the turn (no handoff, then the pause); the
        // waiter then takes the key itself (1), and so on. The count is read by each holder
        // while it holds: nothing else is granted meanwhile.
        const auto options = lock_options{}.with_local_turn(3);
        std::vector<session> sessions;
        std::vector<std::unique_ptr<lock>> locks;
        for (int i = 0; i < 2; ++i) {
            sessions.push_back(co_await session::async_create(consul, quick(5s)));
            locks.push_back(std::make_unique<lock>(consul, p + "t", options));
        }
        auto hub = conclave::detail::key_hub::of(consul, p + "t", {});
        std::vector<unsigned> counts; // the process's count at each grant
        constexpr std::size_t grants = 12;
        countdown finished{ioc.get_executor(), 2};
        auto loop = [&](std::size_t i) -> asio::awaitable<void> {
            while (counts.size() < grants) {
                auto lease = co_await locks[i]->async_acquire(sessions[i]);
                counts.push_back(hub->local_streak);
                co_await lease.async_release();
            }
            finished.count_down();
        };
        for (std::size_t i = 0; i < 2; ++i)
            asio::co_spawn(ioc, loop(i), asio::detached);
        co_await finished.wait();
        std::vector<unsigned> expected;
        for (std::size_t g = 0; g < counts.size(); ++g)
            expected.push_back(unsigned(g % 3) + 1);
        CHECK(counts == expected);
        co_await clean_up(consul, p + "t", sessions);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "after the end of a turn, the key nobody else wanted is taken again",
                 "[lock][turns]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(5s));
        lock mutex{consul, p + "t", lock_options{}.with_local_turn(1)};
        auto lease = co_await mutex.async_acquire(s);
        co_await lease.async_release(); // ends the turn: this process's waiters pause
        // A budget of 0 still gets its attempt: the pause holds back only the acquires
        // whose budget outlasts it.
        auto again = co_await mutex.async_try_acquire(s, 0ms);
        CHECK(again.has_value());
        if (again)
            co_await again->async_release();
        // A plain acquire too.
        auto third = co_await mutex.async_acquire(s);
        CHECK(third.held().has_value());
        co_await third.async_release();
        co_await s.async_destroy();
        co_await mutex.async_destroy();
    };
    run(ioc, body());
}
