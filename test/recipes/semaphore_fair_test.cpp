// SPDX-License-Identifier: BSL-1.0
// The semaphore's fair mode: free slots go to the contenders of every process in the order
// they came. Two clients stand for two processes (each has its own queue of local waiters).
#include "recipes_fixture.hpp"
#include "semaphore_waits.hpp"

#include <conclave/semaphore.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

TEST_CASE_METHOD(recipes_fixture,
                 "fair mode: a release hands its slot to the first in line in another process, "
                 "not to a later waiter of its own",
                 "[semaphore][fair]") {
    // (Without fair mode the release hands the slot to the waiter of its own process.)
    auto body = [&]() -> asio::awaitable<void> {
        const auto prefix = p + "fair";
        // (A patience far above any round trip: the order is what is checked.)
        const auto opts = semaphore_options{}.with_fair().with_fair_patience(20s);
        client elsewhere{ioc.get_executor(), server.client_config()}; // another process
        auto holder = co_await session::async_create(consul, quick(10s));
        auto here = co_await session::async_create(consul, quick(10s));
        auto there = co_await session::async_create(elsewhere, quick(10s));
        semaphore sem_here{consul, prefix, 1, opts};
        semaphore sem_there{elsewhere, prefix, 1, opts};
        auto held = co_await sem_here.async_acquire(holder);

        // First in line: the other process's waiter; then a later waiter of ours.
        granted_in_order g;
        g.acquire(ioc, sem_there, there, "there");
        co_await wait_in_line(consul, prefix, there.id());
        g.acquire(ioc, sem_here, here, "here");
        co_await wait_in_line(consul, prefix, here.id());

        co_await held.async_release();
        const bool both = co_await g.release_all(ioc, 2);
        REQUIRE(both);
        CHECK(g.order.front() == "there");
        co_await sem_here.async_destroy();
        co_await sem_there.async_destroy();
        co_await holder.async_destroy();
        co_await here.async_destroy();
        co_await there.async_destroy();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "fair mode: acquires sharing a session go to the back of the line after each "
                 "permit",
                 "[semaphore][fair]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto prefix = p + "shared";
        const auto opts = semaphore_options{}.with_fair().with_fair_patience(20s);
        client elsewhere{ioc.get_executor(), server.client_config()}; // another process
        auto shared = co_await session::async_create(consul, quick(10s));
        auto there = co_await session::async_create(elsewhere, quick(10s));
        semaphore sem_here{consul, prefix, 1, opts};
        semaphore sem_there{elsewhere, prefix, 1, opts};
        auto held = co_await sem_here.async_acquire(shared); // its key: first in line

        granted_in_order g;
        g.acquire(ioc, sem_there, there, "there");
        co_await wait_in_line(consul, prefix, there.id());
        // A second acquire with the held permit's session waits for that permit to end.
        g.acquire(ioc, sem_here, shared, "here");
        co_await held.async_release();
        const bool both = co_await g.release_all(ioc, 2);
        REQUIRE(both);
        CHECK(g.order.front() == "there"); // not the session's old place in line
        co_await sem_here.async_destroy();
        co_await sem_there.async_destroy();
        co_await shared.async_destroy();
        co_await there.async_destroy();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "fair mode: a contender that stays in line without taking a free slot delays "
                 "the others by fair_patience, not indefinitely",
                 "[semaphore][fair]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto prefix = p + "stuck";
        // A contender key of a live session that never takes its slot (a stuck process).
        auto stuck = co_await consul.async_session_create(
            session_options{}.with_ttl(30s).without_node_checks());
        co_await consul.async_kv_put(
            prefix + "/" + stuck, "stuck",
            kv_put_options{}.with_acquire(stuck).with_flags(semaphore_flag_value));

        auto s = co_await session::async_create(consul, quick(10s));
        semaphore sem{consul, prefix, 1, semaphore_options{}.with_fair().with_fair_patience(300ms)};
        // Writes under the prefix meanwhile (not in the line) do not restart the patience.
        bool acquired = false, noise_done = false;
        std::size_t noise = 0;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                while (!acquired && noise < 200) {
                    co_await consul.async_kv_put(prefix + "/noise", std::to_string(++noise));
                    co_await sleep(50ms);
                }
                noise_done = true;
            },
            asio::detached);
        const auto asked = std::chrono::steady_clock::now();
        auto got = co_await sem.async_try_acquire(s, 20s);
        const auto waited = std::chrono::steady_clock::now() - asked;
        acquired = true;
        REQUIRE(got);
        CHECK(waited >= 300ms); // it left the slot to the contender before it first
        CHECK(noise < 200);     // and took it while the writes went on
        co_await got->async_release();

        const bool quiet = co_await eventually(ioc, [&] { return noise_done; });
        REQUIRE(quiet);
        co_await consul.async_kv_delete(prefix + "/noise");
        co_await consul.async_kv_delete(prefix + "/" + stuck);
        co_await consul.async_session_destroy(stuck);
        co_await consul.async_kv_delete(prefix + "/.lock");
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "fair mode: contenders of several processes are served in the order they came",
                 "[semaphore][fair]") {
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t processes = 3, per_process = 2;
        const auto prefix = p + "line";
        const auto opts = semaphore_options{}.with_fair().with_fair_patience(20s);
        std::vector<std::unique_ptr<client>> clients;
        std::vector<std::unique_ptr<semaphore>> sems;
        for (std::size_t i = 0; i < processes; ++i) {
            clients.push_back(std::make_unique<client>(ioc.get_executor(), server.client_config()));
            sems.push_back(std::make_unique<semaphore>(*clients[i], prefix, 1, opts));
        }
        auto first = co_await session::async_create(consul, quick(10s));
        semaphore sem_first{consul, prefix, 1, opts};
        auto held = co_await sem_first.async_acquire(first);

        // Waiters join the line one after the other, alternating between the processes.
        std::vector<session> sessions;
        std::vector<std::size_t> served;
        std::vector<std::optional<permit>> permits(processes * per_process);
        for (std::size_t k = 0; k < processes * per_process; ++k) {
            const auto i = k % processes;
            sessions.push_back(co_await session::async_create(*clients[i], quick(10s)));
            asio::co_spawn(
                ioc,
                [&, k, i]() -> asio::awaitable<void> {
                    permits[k] = co_await sems[i]->async_acquire(sessions[k]);
                    served.push_back(k);
                    co_await permits[k]->async_release(); // the next one's turn
                },
                asio::detached);
            co_await wait_in_line(consul, prefix, sessions[k].id());
        }
        co_await held.async_release();
        const bool all = co_await eventually(ioc, [&] { return served.size() == permits.size(); });
        REQUIRE(all);
        for (std::size_t k = 0; k < served.size(); ++k)
            CHECK(served[k] == k);
        for (auto& s : sessions)
            co_await s.async_destroy();
        for (auto& sem : sems)
            co_await sem->async_destroy();
        co_await sem_first.async_destroy();
        co_await first.async_destroy();
    };
    run(ioc, body(), 60s);
}
