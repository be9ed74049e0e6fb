// SPDX-License-Identifier: BSL-1.0
// One session shared by many coroutines: a semaphore gives a session one slot (Go's layout
// has one contender key per session), so the coroutines take turns on it and never hold two
// permits of it at once; a permit dropped without a release lets the next one take the slot.
#include "recipes/semaphore/semaphore_hub.hpp"
#include "recipes_fixture.hpp"

#include <conclave/semaphore.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <algorithm>
#include <exception>
#include <optional>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

struct shared_session_fixture : recipes_fixture {
    /// What the coroutines of take_turns saw.
    struct turns {
        unsigned most_per_session = 0; ///< permits of one session held at once, at most
        unsigned most = 0;             ///< permits held at once, at most
        std::size_t grants = 0;
    };

    /// `per_session` coroutines on each of `sessions` sessions, each doing `rounds` times:
    /// acquire a permit of a semaphore of `limit` slots, hold it a moment, release it.
    /// Counted at grant and before the release: no sleep decides anything.
    asio::awaitable<turns> take_turns(std::size_t sessions, std::size_t per_session,
                                      std::uint32_t limit, unsigned rounds) {
        const auto prefix = p + "pool";
        std::vector<session> ss;
        for (std::size_t i = 0; i < sessions; ++i) // (no renewal running: a TTL that outlasts it)
            ss.push_back(co_await session::async_create(consul, quick(60s)));
        semaphore sem{consul, prefix, limit};
        turns seen;
        unsigned inside = 0;
        std::vector<unsigned> inside_of(sessions, 0);
        countdown done{ioc.get_executor(), sessions * per_session};
        std::exception_ptr failure;
        // (A coroutine lambda must outlive its coroutines: one closure, the index passed.)
        auto worker = [&](std::size_t i) -> asio::awaitable<void> {
            const std::size_t mine = i % sessions;
            for (unsigned r = 0; r < rounds; ++r) {
                auto slot = co_await sem.async_acquire(ss[mine]);
                seen.most = std::max(seen.most, ++inside);
                seen.most_per_session = std::max(seen.most_per_session, ++inside_of[mine]);
                ++seen.grants;
                CHECK(slot.held());
                asio::steady_timer hold{ioc, std::chrono::milliseconds{1 + (i + r) % 3}};
                co_await hold.async_wait(asio::use_awaitable);
                --inside_of[mine];
                --inside;
                co_await slot.async_release();
            }
        };
        for (std::size_t i = 0; i < sessions * per_session; ++i)
            asio::co_spawn(ioc, worker(i), [&](std::exception_ptr e) {
                if (e && !failure)
                    failure = e;
                done.count_down();
            });
        co_await done.wait();
        if (failure)
            std::rethrow_exception(failure);

        // Every slot given back, every contender key deleted by the last release of its
        // session (and kept while another coroutine of that session waited).
        auto keys = co_await consul.async_kv_keys(prefix + "/");
        CHECK(keys.keys == std::vector<std::string>{prefix + "/.lock"});
        auto record = co_await consul.async_kv_get(prefix + "/.lock");
        REQUIRE(record.entry);
        CHECK(record.entry->value == R"({"Limit":)" + std::to_string(limit) + R"(,"Holders":{}})");
        co_await sem.async_destroy();
        for (auto& s : ss)
            co_await s.async_destroy();
        co_return seen;
    }
};

void one_session_takes_turns(shared_session_fixture& f, std::size_t coroutines) {
    constexpr unsigned rounds = 4;
    auto seen = run(f.ioc, f.take_turns(1, coroutines, 3, rounds), 60s);
    CHECK(seen.most == 1); // one slot per session, though the semaphore has 3
    CHECK(seen.grants == coroutines * rounds);
}

} // namespace

TEST_CASE_METHOD(shared_session_fixture,
                 "2 coroutines on one session take turns on its one semaphore slot",
                 "[semaphore][shared-session]") {
    one_session_takes_turns(*this, 2);
}

TEST_CASE_METHOD(shared_session_fixture,
                 "8 coroutines on one session take turns on its one semaphore slot",
                 "[semaphore][shared-session]") {
    one_session_takes_turns(*this, 8);
}

TEST_CASE_METHOD(shared_session_fixture,
                 "64 coroutines on one session take turns on its one semaphore slot",
                 "[semaphore][shared-session]") {
    one_session_takes_turns(*this, 64);
}

TEST_CASE_METHOD(shared_session_fixture,
                 "coroutines of three sessions share a semaphore of 2, one slot per session",
                 "[semaphore][shared-session]") {
    constexpr unsigned rounds = 3;
    auto seen = run(ioc, take_turns(3, 6, 2, rounds), 60s);
    CHECK(seen.most_per_session == 1);
    CHECK(seen.most == 2); // the limit, reached: sessions did hold slots side by side
    CHECK(seen.grants == 3 * 6 * rounds);
}

TEST_CASE_METHOD(shared_session_fixture,
                 "a permit dropped without a release lets its session's waiting acquire take "
                 "the slot over",
                 "[semaphore][shared-session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        semaphore sem{consul, p + "pool", 3};
        auto hub = conclave::detail::semaphore_hub::of(consul, sem.prefix(), {});
        std::optional<permit> first{co_await sem.async_acquire(s)};
        const auto index = first->token().modify_index;

        // Free slots, but not for this session while its permit lives; the try's cleanup
        // leaves that permit's contender key (the session's) alone.
        CHECK_FALSE(co_await sem.async_try_acquire(s, 100ms));
        auto contender = co_await consul.async_kv_get(sem.prefix() + "/" + s.id());
        REQUIRE(contender.entry);
        CHECK(contender.entry->session == s.id());
        CHECK(first->held());

        auto second = [&]() -> asio::awaitable<permit> { co_return co_await sem.async_acquire(s); };
        auto drop = [&]() -> asio::awaitable<void> {
            // Once the second acquire waits in the queue (its contender key written).
            while (hub->queue.empty() || !hub->queue.front()->enqueued)
                co_await hub->changed.wait(std::chrono::steady_clock::now() + 1s);
            first.reset();
        };
        auto got = co_await (second() && drop());
        CHECK(got.held());
        // The slot the session held, without a write.
        CHECK(got.token().modify_index == index);
        auto record = co_await consul.async_kv_get(sem.prefix() + "/.lock");
        REQUIRE(record.entry);
        CHECK(record.entry->modify_index == index);

        co_await got.async_release();
        auto keys = co_await consul.async_kv_keys(sem.prefix() + "/");
        CHECK(keys.keys.size() == 1); // .lock only
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(shared_session_fixture,
                 "a release hands the slot to a waiting acquire of its own session",
                 "[semaphore][shared-session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        semaphore sem{consul, p + "pool", 1};
        auto hub = conclave::detail::semaphore_hub::of(consul, sem.prefix(), {});
        auto first = co_await sem.async_acquire(s);
        auto second = [&]() -> asio::awaitable<permit> { co_return co_await sem.async_acquire(s); };
        auto release = [&]() -> asio::awaitable<void> {
            while (hub->queue.empty() || !hub->queue.front()->enqueued)
                co_await hub->changed.wait(std::chrono::steady_clock::now() + 1s);
            CHECK(first.held()); // it waited
            co_await first.async_release();
        };
        auto got = co_await (second() && release());
        CHECK(got.held());
        CHECK_FALSE(first.held());
        // The slot the session was added to the holders for: its index (the handoff's
        // check-and-set wrote `.lock` unchanged, which Consul does not count as a write).
        CHECK(got.token().modify_index == first.token().modify_index);
        // The session holds its slot still, with its contender key.
        auto record = co_await consul.async_kv_get(sem.prefix() + "/.lock");
        REQUIRE(record.entry);
        CHECK(record.entry->value == R"({"Limit":1,"Holders":{")" + s.id() + R"(":true}})");
        auto contender = co_await consul.async_kv_get(sem.prefix() + "/" + s.id());
        REQUIRE(contender.entry);
        CHECK(contender.entry->session == s.id());

        co_await got.async_release();
        auto keys = co_await consul.async_kv_keys(sem.prefix() + "/");
        CHECK(keys.keys.size() == 1); // .lock only
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}
