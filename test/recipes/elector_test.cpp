// SPDX-License-Identifier: BSL-1.0
// conclave::elector: leading, losing, resigning, stepping down on cancellation, leader
// discovery and the observe() stream. The hand-over to a preferred candidate is in
// elector_handover_test.cpp, the electors' sessions in elector_sessions_test.cpp.
#include "elector_candidate.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using steady = std::chrono::steady_clock;

TEST_CASE_METHOD(recipes_fixture, "the leader runs its task, publishes its value and is found",
                 "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        candidate a{*this, "node-a:8080"};
        elector bystander{consul, p + "leader"};
        auto none = co_await bystander.async_leader();
        CHECK_FALSE(none.has_value());

        co_await a.start(a.lead_forever());
        co_await a.wait_until([&] { return a.terms == 1; });
        auto who = co_await bystander.async_leader();
        REQUIRE(who.has_value());
        CHECK(who->value == "node-a:8080");
        CHECK(who->session == a.s.id());
        CHECK(who->modify_index == a.tokens.front().modify_index);
        CHECK(a.el.is_leader() == a.tokens.front());
        CHECK_FALSE(bystander.is_leader());

        // Stopping: the task is cancelled, has returned, then the key is released.
        a.stop.emit(asio::cancellation_type::terminal);
        co_await a.wait_until([&] { return a.ended.has_value(); });
        CHECK(*a.ended == asio::error::operation_aborted);
        CHECK(a.tasks_returned == 1);
        CHECK_FALSE(a.el.is_leader());
        auto after = co_await bystander.async_leader();
        CHECK_FALSE(after.has_value());
        co_await a.finish();
        lock cleanup{consul, p + "leader"};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "losing the key cancels the leader task at once and the campaign goes on",
                 "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        candidate a{*this, "a"};
        co_await a.start(a.lead_forever());
        co_await a.wait_until([&] { return a.terms == 1; });
        const auto deleted_at = steady::now();
        co_await consul.async_kv_delete(p + "leader");
        co_await a.wait_until([&] { return a.tasks_returned == 1; });
        CHECK(steady::now() - deleted_at < 1s);
        co_await a.wait_until([&] { return a.terms == 2; }); // elected again
        CHECK(a.tokens[1].modify_index > a.tokens[0].modify_index);
        CHECK_FALSE(a.ended.has_value());
        co_await a.finish();
        lock cleanup{consul, p + "leader"};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "on resign the next candidate leads only after the old task has returned",
                 "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        candidate a{*this, "a"};
        candidate b{*this, "b"};
        steady::time_point a_returned{};
        // a's task takes 200 ms to wind down after it was cancelled.
        auto slow_stop = [&](leadership l) -> asio::awaitable<void> {
            ++a.terms;
            a.tokens.push_back(l.token());
            a.changed.notify();
            asio::steady_timer forever{ioc, steady::time_point::max()};
            co_await forever.async_wait(asio::as_tuple(asio::use_awaitable));
            co_await asio::this_coro::reset_cancellation_state();
            asio::steady_timer wind_down{ioc, 200ms};
            co_await wind_down.async_wait(asio::use_awaitable);
            a_returned = steady::now();
            ++a.tasks_returned;
        };
        leader_task slow{slow_stop};
        co_await a.start(std::move(slow));
        co_await a.wait_until([&] { return a.terms == 1; });
        co_await b.start(b.lead_forever());
        steady::time_point b_started{};
        auto observe_b = [&]() -> asio::awaitable<void> {
            co_await b.wait_until([&] { return b.terms == 1; });
            b_started = steady::now();
        };
        co_await (a.el.async_resign(asio::use_awaitable) && observe_b());
        CHECK(a.tasks_returned == 1);
        CHECK(b_started >= a_returned);
        CHECK(b.tokens.front().modify_index > a.tokens.front().modify_index);
        CHECK(b.el.is_leader());
        CHECK_FALSE(a.el.is_leader());
        // a sits out while b leads: still one term.
        co_await sleep(100ms);
        CHECK(a.terms == 1);
        co_await b.finish();
        co_await a.wait_until([&] { return a.terms == 2; }); // a campaigns again after b
        co_await a.finish();
        lock cleanup{consul, p + "leader"};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "observe reports each leader, and no leader, latest first",
                 "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        elector watcher{consul, p + "leader"};
        auto changes = watcher.observe();
        auto first = co_await changes.async_next();
        CHECK_FALSE(first.has_value()); // nobody leads: said explicitly

        candidate a{*this, "a"};
        co_await a.start(a.lead_forever());
        auto second = co_await changes.async_next();
        REQUIRE(second.has_value());
        CHECK(second->value == "a");

        // Between two calls a steps down and b takes over: only the latest is reported.
        // (The watcher can see a lead before a's own acquire has completed: a resign
        // before then would find nothing to resign.)
        co_await a.wait_until([&] { return a.terms == 1; });
        candidate b{*this, "b"};
        co_await b.start(b.lead_forever());
        co_await a.el.async_resign();
        co_await b.wait_until([&] { return b.terms == 1; });
        auto third = co_await changes.async_next();
        REQUIRE(third.has_value());
        CHECK(third->value == "b");
        CHECK(third->session == b.s.id());

        co_await b.finish();
        co_await a.finish();
        auto gone = co_await changes.async_next();
        CHECK_FALSE(gone.has_value());
        lock cleanup{consul, p + "leader"};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a task that returns ends the term and the campaign restarts",
                 "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        candidate a{*this, "a"};
        auto twice = [&](leadership l) -> asio::awaitable<void> {
            ++a.terms;
            a.tokens.push_back(l.token());
            a.changed.notify();
            if (a.terms < 3)
                co_return; // done leading for now: released, then elected again
            asio::steady_timer forever{ioc, steady::time_point::max()};
            co_await forever.async_wait(asio::use_awaitable);
        };
        leader_task task{twice};
        co_await a.start(std::move(task));
        co_await a.wait_until([&] { return a.terms == 3; });
        CHECK(a.tokens[1].modify_index > a.tokens[0].modify_index);
        CHECK(a.tokens[2].modify_index > a.tokens[1].modify_index);
        co_await a.finish();
        lock cleanup{consul, p + "leader"};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a task that throws ends async_run with task_failed, released",
                 "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        candidate a{*this, "a"};
        auto failing = [](leadership) -> asio::awaitable<void> {
            throw std::runtime_error("leader task bug");
            co_return;
        };
        leader_task task{failing};
        co_await a.start(std::move(task));
        co_await a.wait_until([&] { return a.ended.has_value(); });
        CHECK(*a.ended == errc::task_failed);
        auto who = co_await a.el.async_leader();
        CHECK_FALSE(who.has_value());
        co_await a.finish();
        lock cleanup{consul, p + "leader"};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "with release_on_stop off, stopping keeps the key until the "
                 "session ends",
                 "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        candidate a{*this, "a"};
        a.el = elector{consul, p + "leader", elector_options{}.with_release_on_stop(false)};
        co_await a.start(a.lead_forever());
        co_await a.wait_until([&] { return a.terms == 1; });
        a.stop.emit(asio::cancellation_type::terminal);
        co_await a.wait_until([&] { return a.ended.has_value(); });
        auto who = co_await a.el.async_leader();
        REQUIRE(who.has_value());
        CHECK(who->session == a.s.id());
        co_await a.finish(); // destroying the session releases it
        auto after = co_await a.el.async_leader();
        CHECK_FALSE(after.has_value());
        lock cleanup{consul, p + "leader"};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "an elector on a key of another recipe is a conflict",
                 "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "leader", "x",
                                     kv_put_options{}.with_flags(semaphore_flag_value));
        candidate a{*this, "a"};
        co_await a.start(a.lead_forever());
        co_await a.wait_until([&] { return a.ended.has_value(); });
        CHECK(*a.ended == errc::conflict);
        CHECK(a.terms == 0);
        co_await a.finish();
        co_await consul.async_kv_delete(p + "leader");
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "losing the session ends async_run with session_invalidated",
                 "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        candidate a{*this, "a"};
        co_await a.start(a.lead_forever());
        co_await a.wait_until([&] { return a.terms == 1; });
        server.expire_session(a.s.id());
        co_await a.wait_until([&] { return a.ended.has_value(); });
        CHECK(*a.ended == errc::session_invalidated);
        CHECK(a.tasks_returned == 1);
        CHECK_FALSE(a.el.is_leader());
        co_await a.finish();
        lock cleanup{consul, p + "leader"};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a leader's term survives failed reads of its key up to its retry budget",
                 "[elector][lost]") {
    auto body = [&]() -> asio::awaitable<void> {
        candidate a{*this, consul, elector_options{}.with_value("a").with_monitor_retries(2, 50ms)};
        co_await a.start(a.lead_forever());
        co_await a.wait_until([&] { return a.terms == 1; });
        // The monitor's blocking read in flight is not affected by injected errors: a write
        // of the key by the leader's own session (a txn) makes it return, and the reads
        // after it fail.
        int touches = 0; // a different value each time: an identical write changes nothing
        auto touch = [&]() -> asio::awaitable<void> {
            std::vector<txn_op> ops;
            ops.push_back(txn_op::lock(p + "leader", a.s.id(), "a" + std::to_string(++touches),
                                       lock_flag_value));
            co_await consul.async_txn(std::move(ops));
        };
        server.inject_errors("/v1/kv/", 2, 500); // within the budget: the term goes on
        co_await touch();
        auto kept = co_await (a.wait_until([&] { return a.tasks_returned > 0; }) || sleep(600ms));
        CHECK(kept.index() == 1);
        server.inject_errors("/v1/kv/", 3, 500); // beyond it: the term ends as lost
        co_await touch();
        co_await a.wait_until([&] { return a.tasks_returned == 1; });
        co_await a.finish();
        lock cleanup{consul, p + "leader"};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

// The documented way to run a candidate is `s.async_run || el.async_run`: stopping it stops
// both. The session's destroy must come after the elector's release: a destroy first frees
// the key with the session's lock-delay armed, and no candidate could lead for that long.
TEST_CASE_METHOD(recipes_fixture,
                 "stopping a session's and an elector's runs together frees the key without "
                 "lock-delay",
                 "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(
            consul, session_config{}.with_ttl(10s).with_lock_delay(30s));
        elector el{consul, p + "leader"};
        change_event changed{ioc.get_executor()};
        bool leading = false, over = false;
        leader_task task = [&](leadership) -> asio::awaitable<void> {
            leading = true;
            changed.notify();
            asio::steady_timer forever{ioc, steady::time_point::max()};
            co_await forever.async_wait(asio::use_awaitable);
        };
        auto both = [&]() -> asio::awaitable<void> {
            co_await (s.async_run(awaitable_tuple) || el.async_run(s, task, awaitable_tuple));
        };
        asio::cancellation_signal stop;
        asio::co_spawn(ioc, both(),
                       asio::bind_cancellation_slot(stop.slot(), [&](std::exception_ptr) {
                           over = true;
                           changed.notify();
                       }));
        while (!leading)
            co_await changed.wait();
        stop.emit(asio::cancellation_type::terminal);
        while (!over)
            co_await changed.wait();
        co_await wait_no_sessions(10s); // destroyed in the background
        // Another session takes the key at once (under lock-delay Consul would refuse).
        auto next = co_await session::async_create(consul, quick());
        const bool taken = co_await consul.async_kv_put(
            p + "leader", "", kv_put_options{}.with_acquire(next.id()).with_flags(lock_flag_value));
        CHECK(taken);
        co_await next.async_destroy();
        co_await consul.async_kv_delete(p + "leader");
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "the leader task's exception reaches the caller, after the release", "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        elector el{consul, p + "leader"};
        auto failing = [](leadership) -> asio::awaitable<void> {
            throw std::runtime_error("leader task bug");
            co_return;
        };
        std::string caught;
        try {
            co_await el.async_run(s, failing);
        } catch (const std::runtime_error& e) {
            caught = e.what();
        }
        CHECK(caught == "leader task bug");
        CHECK_FALSE(co_await el.async_leader()); // released before
        // Other tokens: the code, and the exception in the diagnostics' cause.
        auto [ec] = co_await el.async_run(s, failing, awaitable_tuple);
        CHECK(ec == errc::task_failed);
        co_await consul.async_kv_delete(p + "leader");
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a resign may set its own hold-off, and a cancel ends the hold-off at once",
                 "[elector]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        elector el{consul, p + "leader",
                   elector_options{}.with_resign_holdoff(std::chrono::milliseconds{60000})};
        std::vector<steady::time_point> began;
        asio::steady_timer second_term{ioc, asio::steady_timer::time_point::max()};
        // The first term steps down from the task itself, for 300 ms instead of 60 s.
        auto task = [&](leadership) -> asio::awaitable<void> {
            began.push_back(steady::now());
            if (began.size() == 1)
                el.async_resign(std::chrono::milliseconds{300}, asio::detached);
            else
                second_term.cancel();
            co_await sleep(60s);
        };
        steady::time_point cancelled_at{};
        auto driver = [&]() -> asio::awaitable<void> {
            co_await second_term.async_wait(awaitable_tuple);
            // Resign for the default 60 s, then cancel the run while it sits out.
            co_await el.async_resign();
            co_await sleep(200ms);
            cancelled_at = steady::now();
        };
        // (Not renewed: the test ends well within the TTL.)
        auto outcome = co_await (el.async_run(s, task, awaitable_tuple) || driver());
        const auto stopped_after = steady::now() - cancelled_at;
        CHECK(outcome.index() == 1);
        REQUIRE(began.size() == 2);
        CHECK(began[1] - began[0] >= 300ms);
        CHECK(began[1] - began[0] < 10s); // not resign_holdoff's 60 s
        CHECK(stopped_after < 5s);        // not the rest of the 60 s hold-off
        CHECK_FALSE(co_await el.async_leader());
        co_await consul.async_kv_delete(p + "leader");
        co_await s.async_destroy();
    };
    run(ioc, body());
}
