// SPDX-License-Identifier: BSL-1.0
// conclave::double_barrier and conclave::barrier: N-1 participants do not pass, the N-th
// lets every one through; leaves wait for the round; a participant whose session ended
// counts neither for an enter nor for a leave (behaviors release and delete); a late
// arriver passes; cancellation deletes the enter's key; bad input and other recipes' keys
// are refused with nothing written; a second concurrent enter of one session is refused. A
// barrier holds its waiters until it is removed.
#include "blocking_reads.hpp"
#include "recipes_fixture.hpp"
#include "thrown_by.hpp"

#include <conclave/barrier.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

// Participants of one prefix, each with its own client (as separate services), session
// and barrier object, their blocking reads counted by one observer.
struct party {
    party(recipes_fixture& f, const std::string& prefix, std::size_t n, std::uint32_t count,
          session_behavior behavior = session_behavior::release)
        : fixture(f)
        , outcome(n) {
        for (std::size_t i = 0; i < n; ++i) {
            auto cfg = f.server.client_config();
            reads.push_back(std::make_shared<blocking_reads>());
            cfg.observer = reads.back();
            clients.push_back(std::make_unique<client>(f.ioc.get_executor(), cfg));
            barriers.push_back(std::make_unique<double_barrier>(*clients.back(), prefix, count));
        }
        // A TTL no test comes near, on a loaded machine too: the sessions are not renewed.
        config = quick(60s).with_behavior(behavior);
    }

    asio::awaitable<void> create_sessions() {
        for (auto& c : clients)
            sessions.push_back(co_await session::async_create(*c, config));
    }

    // Starts participant i's enter (or leave) in the background; its outcome is kept.
    void start(std::size_t i, bool enter) {
        outcome[i].reset();
        asio::co_spawn(fixture.ioc, run_op(i, enter), asio::detached);
    }

    // (A member function, not a lambda: the coroutine outlives the call that starts it.)
    asio::awaitable<void> run_op(std::size_t i, bool enter) {
        std::tuple<error_code> r;
        if (enter)
            r = co_await barriers[i]->async_enter(sessions[i], awaitable_tuple);
        else
            r = co_await barriers[i]->async_leave(sessions[i], awaitable_tuple);
        outcome[i] = std::get<0>(r);
        done.notify();
    }

    // Until participant i's background operation completed.
    asio::awaitable<error_code> outcome_of(std::size_t i) {
        while (!outcome[i])
            co_await done.wait();
        co_return *outcome[i];
    }

    // Until participant i's client has its query parked at Consul (its wait began).
    asio::awaitable<bool> parked(std::size_t i) {
        co_return co_await eventually(fixture.ioc, [&] { return reads[i]->in_flight >= 1; });
    }

    asio::awaitable<void> destroy_sessions() {
        for (auto& s : sessions)
            co_await s.async_destroy(awaitable_tuple);
    }

    recipes_fixture& fixture;
    std::vector<std::shared_ptr<blocking_reads>> reads; ///< one per client
    session_config config;
    std::vector<std::unique_ptr<client>> clients;
    std::vector<std::unique_ptr<double_barrier>> barriers;
    std::vector<session> sessions;
    std::vector<std::optional<error_code>> outcome;
    change_event done{fixture.ioc.get_executor()};
};

// Until no key is left under `prefix` (blocking reads, no polling).
asio::awaitable<bool> no_keys_left(client& c, const std::string& prefix) {
    std::uint64_t index = 0;
    const auto end = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < end) {
        auto r = co_await c.async_kv_keys(
            prefix, kv_keys_options{}.with_query(query_options::blocking(index, 1000ms)));
        if (r.keys.empty())
            co_return true;
        index = r.meta.index;
    }
    co_return false;
}

} // namespace

TEST_CASE_METHOD(recipes_fixture, "a double barrier of 0 participants or no prefix is refused",
                 "[barrier]") {
    try {
        double_barrier none{consul, p + "b", 0};
        FAIL("constructed");
    } catch (const boost::system::system_error& e) {
        CHECK(e.code() == errc::invalid_argument);
    }
    CHECK_THROWS_AS((double_barrier{consul, "/", 2}), boost::system::system_error);
    double_barrier trimmed{consul, p + "b/", 2};
    CHECK(trimmed.prefix() == p + "b");
    CHECK(trimmed.participants() == 2);
}

TEST_CASE_METHOD(recipes_fixture,
                 "N-1 participants wait at enter and the N-th lets them all through and they "
                 "leave together",
                 "[barrier]") {
    party three{*this, p + "b", 3, 3};
    auto body = [&]() -> asio::awaitable<void> {
        co_await three.create_sessions();
        three.start(0, true);
        three.start(1, true);
        // Both are inside and waiting (each client's query parked): neither passed.
        const bool parked0 = co_await three.parked(0);
        const bool parked1 = co_await three.parked(1);
        CHECK(parked0);
        CHECK(parked1);
        auto keys = co_await consul.async_kv_keys(p + "b/");
        CHECK(keys.keys.size() == 2);
        CHECK_FALSE(three.outcome[0]);
        CHECK_FALSE(three.outcome[1]);

        co_await three.barriers[2]->async_enter(three.sessions[2]);
        const auto first = co_await three.outcome_of(0);
        const auto second = co_await three.outcome_of(1);
        CHECK_FALSE(first);
        CHECK_FALSE(second);
        auto ready = co_await consul.async_kv_get(p + "b/.ready");
        REQUIRE(ready.entry);
        CHECK(ready.entry->flags == double_barrier_flag_value);

        // Two leave: they wait for the third.
        three.start(0, false);
        three.start(1, false);
        const bool waiting0 = co_await three.parked(0);
        const bool waiting1 = co_await three.parked(1);
        CHECK(waiting0);
        CHECK(waiting1);
        CHECK_FALSE(three.outcome[0]);
        CHECK_FALSE(three.outcome[1]);
        co_await three.barriers[2]->async_leave(three.sessions[2]);
        const auto left0 = co_await three.outcome_of(0);
        const auto left1 = co_await three.outcome_of(1);
        CHECK_FALSE(left0);
        CHECK_FALSE(left1);
        // Nothing is left: the participants' keys and the marker are gone.
        auto after = co_await consul.async_kv_keys(p + "b/");
        CHECK(after.keys.empty());
        co_await three.destroy_sessions();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a participant whose session ended counts neither for enter nor for leave",
                 "[barrier]") {
    for (auto behavior : {session_behavior::release, session_behavior::delete_keys}) {
        const auto prefix = p + (behavior == session_behavior::release ? "rel" : "del");
        party four{*this, prefix, 3, 2, behavior};
        auto body = [&]() -> asio::awaitable<void> {
            co_await four.create_sessions();
            // 0 enters, then crashes (its session destroyed behind its back): its enter
            // fails, and its key does not stay.
            four.start(0, true);
            const bool parked = co_await four.parked(0);
            CHECK(parked);
            co_await consul.async_session_destroy(four.sessions[0].id());
            const auto crashed = co_await four.outcome_of(0);
            CHECK(crashed == errc::lock_lost);

            // 1 enters: alone, since 0 does not count.
            four.start(1, true);
            const bool waiting = co_await four.parked(1);
            CHECK(waiting);
            CHECK_FALSE(four.outcome[1]);
            co_await four.barriers[2]->async_enter(four.sessions[2]);
            const auto passed = co_await four.outcome_of(1);
            CHECK_FALSE(passed);

            // 2 crashes inside; 1's leave does not wait for it.
            co_await consul.async_session_destroy(four.sessions[2].id());
            co_await four.barriers[1]->async_leave(four.sessions[1]);
            const bool clean = co_await no_keys_left(consul, prefix + "/");
            CHECK(clean);
            co_await four.destroy_sessions();
        };
        run(ioc, body());
    }
}

TEST_CASE_METHOD(recipes_fixture,
                 "a participant that comes after the barrier opened passes while its round is in",
                 "[barrier]") {
    party three{*this, p + "late", 3, 2};
    auto body = [&]() -> asio::awaitable<void> {
        co_await three.create_sessions();
        using namespace asio::experimental::awaitable_operators;
        co_await (three.barriers[0]->async_enter(three.sessions[0]) &&
                  three.barriers[1]->async_enter(three.sessions[1]));
        // One left already; the late one passes on the marker, and so the one that read late.
        co_await three.barriers[2]->async_enter(three.sessions[2]);
        co_await (three.barriers[0]->async_leave(three.sessions[0]) &&
                  three.barriers[1]->async_leave(three.sessions[1]) &&
                  three.barriers[2]->async_leave(three.sessions[2]));
        auto after = co_await consul.async_kv_keys(p + "late/");
        CHECK(after.keys.empty());
        co_await three.destroy_sessions();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "rounds follow each other: a fast participant's next round does not hold up a "
                 "slow one's leave",
                 "[barrier]") {
    party two{*this, p + "rounds", 2, 2};
    auto rounds = [&](std::size_t i) -> asio::awaitable<void> {
        for (int round = 0; round < 3; ++round) {
            co_await two.barriers[i]->async_enter(two.sessions[i]);
            co_await two.barriers[i]->async_leave(two.sessions[i]);
        }
    };
    auto body = [&]() -> asio::awaitable<void> {
        co_await two.create_sessions();
        using namespace asio::experimental::awaitable_operators;
        co_await (rounds(0) && rounds(1));
        // A leave without an enter waits for nobody.
        co_await two.barriers[0]->async_leave(two.sessions[0]);
        auto after = co_await consul.async_kv_keys(p + "rounds/");
        CHECK(after.keys.empty());
        co_await two.destroy_sessions();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a cancelled enter completes with operation_aborted and leaves no key",
                 "[barrier]") {
    party one{*this, p + "cancel", 1, 2};
    auto body = [&]() -> asio::awaitable<void> {
        co_await one.create_sessions();
        for (auto type : {asio::cancellation_type::terminal, asio::cancellation_type::total}) {
            cancel_after stop{ioc.get_executor(), 300ms, type};
            auto [ec] =
                co_await one.barriers[0]->async_enter(one.sessions[0], stop.bind(awaitable_tuple));
            CHECK(ec == asio::error::operation_aborted);
            auto keys = co_await consul.async_kv_keys(p + "cancel/");
            CHECK(keys.keys.empty());
        }
        co_await one.destroy_sessions();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a second enter of a session under way on the prefix is refused and the "
                 "first goes on",
                 "[barrier]") {
    party two{*this, p + "twice", 2, 2};
    auto body = [&]() -> asio::awaitable<void> {
        using namespace asio::experimental::awaitable_operators;
        co_await two.create_sessions();
        two.start(0, true);
        CHECK(co_await two.parked(0)); // its key written, its wait begun
        // The same object, and another object of the same prefix, with the same session.
        double_barrier other{consul, p + "twice", 2};
        for (auto* b : {two.barriers[0].get(), &other}) {
            const auto [ec, what] = co_await thrown_by(b->async_enter(two.sessions[0]));
            CHECK(ec == errc::invalid_argument);
            CHECK(contains(what, "session " + two.sessions[0].id() + " is entering it already"));
        }
        // The first enter's key is intact: the second participant opens the barrier for it.
        auto keys = co_await consul.async_kv_keys(p + "twice/");
        CHECK(keys.keys == std::vector<std::string>{p + "twice/" + two.sessions[0].id()});
        co_await two.barriers[1]->async_enter(two.sessions[1]);
        const auto first = co_await two.outcome_of(0);
        CHECK(!first);
        // Once it is done, the session may enter again (it is inside: at once).
        co_await other.async_enter(two.sessions[0]);
        co_await (two.barriers[0]->async_leave(two.sessions[0]) &&
                  two.barriers[1]->async_leave(two.sessions[1]));
        co_await two.destroy_sessions();
        CHECK(co_await no_keys_left(consul, p + "twice/"));
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a prefix holding another recipe's key is a conflict and nothing is written",
                 "[barrier]") {
    party two{*this, p + "mixed", 2, 2};
    auto body = [&]() -> asio::awaitable<void> {
        co_await two.create_sessions();
        co_await consul.async_kv_put(p + "mixed/.lock", "{}",
                                     kv_put_options{}.with_flags(semaphore_flag_value));
        const auto [ec, what] = co_await thrown_by(two.barriers[0]->async_enter(two.sessions[0]));
        CHECK(ec == errc::conflict);
        CHECK(contains(what, "key " + p + "mixed/.lock"));
        CHECK(contains(what, "a semaphore's key"));
        auto keys = co_await consul.async_kv_keys(p + "mixed/");
        CHECK(keys.keys.size() == 1); // only the semaphore's
        co_await consul.async_kv_delete(p + "mixed/.lock");

        // A participant inside that expects another count (written here as its enter
        // writes it, so that it stays while the other enters): the enter fails, its key gone.
        const auto inside_key = p + "mixed/" + two.sessions[1].id();
        co_await consul.async_kv_put(inside_key, "3",
                                     kv_put_options{}
                                         .with_acquire(two.sessions[1].id())
                                         .with_flags(double_barrier_flag_value));
        const auto [count_error, count_what] =
            co_await thrown_by(two.barriers[0]->async_enter(two.sessions[0]));
        CHECK(count_error == errc::limit_conflict);
        CHECK(contains(count_what, "expects 3 participants, this one 2"));
        auto left = co_await consul.async_kv_keys(p + "mixed/");
        CHECK(left.keys == std::vector<std::string>{inside_key});
        co_await consul.async_kv_delete(inside_key);
        co_await two.destroy_sessions();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a barrier holds its waiters until it is removed", "[barrier]") {
    auto reads = std::make_shared<blocking_reads>();
    auto cfg = server.client_config();
    cfg.observer = reads;
    client waiter_client{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        const auto key = p + "gate";
        barrier gate{consul, key};
        barrier seen{waiter_client, key};
        co_await seen.async_wait(); // not set: at once
        const bool unset = co_await gate.async_is_set();
        CHECK_FALSE(unset);
        co_await gate.async_set();
        co_await gate.async_set(); // twice changes nothing
        auto raw = co_await consul.async_kv_get(key);
        REQUIRE(raw.entry);
        CHECK(raw.entry->flags == barrier_flag_value);
        const bool set = co_await seen.async_is_set();
        CHECK(set);

        bool passed = false;
        auto wait = [&]() -> asio::awaitable<void> {
            co_await seen.async_wait();
            passed = true;
        };
        auto lift = [&]() -> asio::awaitable<void> {
            const bool parked = co_await eventually(ioc, [&] { return reads->in_flight >= 1; });
            CHECK(parked);
            CHECK_FALSE(passed);
            co_await gate.async_remove();
        };
        using namespace asio::experimental::awaitable_operators;
        co_await (wait() && lift());
        CHECK(passed);
        co_await gate.async_remove(); // not set: nothing to do

        // Cancelled while set: operation_aborted.
        co_await gate.async_set();
        cancel_after stop{ioc.get_executor(), 100ms, asio::cancellation_type::total};
        auto [ec] = co_await seen.async_wait(stop.bind(awaitable_tuple));
        CHECK(ec == asio::error::operation_aborted);
        co_await gate.async_remove();
        auto keys = co_await consul.async_kv_keys(p);
        CHECK(keys.keys.empty());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a barrier's key that another recipe uses is a conflict",
                 "[barrier]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto key = p + "taken";
        co_await consul.async_kv_put(key, "7"); // a counter's
        barrier gate{consul, key};
        const auto [ec, what] = co_await thrown_by(gate.async_remove());
        CHECK(ec == errc::conflict);
        CHECK(contains(what, "key " + key + " is not a barrier: it has flags 0"));
        auto [wait_error] = co_await gate.async_wait(awaitable_tuple);
        CHECK(wait_error == errc::conflict);
        auto raw = co_await consul.async_kv_get(key);
        REQUIRE(raw.entry);
        CHECK(raw.entry->value == "7"); // untouched
        co_await consul.async_kv_delete(key);
    };
    run(ioc, body());
}
