// SPDX-License-Identifier: BSL-1.0
// conclave::elector's sessions: an elector with a session config of its own (its sessions
// reported, campaigning again after one is lost, stopping on what a new one cannot fix), and
// electors of one process sharing one session.
#include "recipes_fixture.hpp"

#include <conclave/elector.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using steady = std::chrono::steady_clock;

TEST_CASE_METHOD(recipes_fixture,
                 "an elector with a session config campaigns again after its session is lost",
                 "[elector][own-session]") {
    auto body = [&]() -> asio::awaitable<void> {
        elector el{consul, p + "leader", elector_options{}.with_value("node-1")};
        std::vector<std::string> sessions; // of each term
        bool first_cancelled = false;
        asio::steady_timer second_term{ioc, asio::steady_timer::time_point::max()};
        auto task = [&](leadership l) -> asio::awaitable<void> {
            sessions.push_back(l.token().session);
            if (sessions.size() == 1) {
                try {
                    server.expire_session(l.token().session);
                    co_await sleep(20s);
                } catch (const boost::system::system_error& e) {
                    first_cancelled = e.code() == asio::error::operation_aborted;
                    throw;
                }
            }
            second_term.cancel();
            co_await sleep(20s);
        };
        auto stop = [&]() -> asio::awaitable<void> {
            co_await second_term.async_wait(awaitable_tuple);
            CHECK(el.is_leader());
        };
        auto outcome = co_await (el.async_run(quick(10s), task, awaitable_tuple) || stop());
        CHECK(outcome.index() == 1); // the run went on until cancelled
        REQUIRE(sessions.size() == 2);
        CHECK(first_cancelled);
        CHECK(sessions[0] != sessions[1]);
        CHECK_FALSE(co_await el.async_leader()); // released when cancelled
        auto left = co_await consul.async_session_list();
        CHECK(left.sessions.empty()); // its last session destroyed before it completed
        co_await consul.async_kv_delete(p + "leader");
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "an elector with a session config stops on what a new session cannot fix",
                 "[elector][own-session]") {
    auto body = [&]() -> asio::awaitable<void> {
        // A key of another recipe: a conflict, not a retry.
        co_await consul.async_kv_put(p + "leader", "x", kv_put_options{}.with_flags(7));
        elector el{consul, p + "leader"};
        auto idle = [](leadership) -> asio::awaitable<void> { co_return; };
        auto [ec] = co_await el.async_run(quick(), idle, awaitable_tuple);
        CHECK(ec == errc::conflict);
        co_await consul.async_kv_delete(p + "leader");

        // A session Consul refuses to create (a TTL below its minimum): not retried.
        auto [refused] = co_await el.async_run(quick(1ms), idle, awaitable_tuple);
        CHECK(refused == errc::invalid_argument);

        // The task's exception, after the release.
        auto failing = [](leadership) -> asio::awaitable<void> {
            throw std::runtime_error("leader task bug");
            co_return;
        };
        std::string caught;
        try {
            co_await el.async_run(quick(), failing);
        } catch (const std::runtime_error& e) {
            caught = e.what();
        }
        CHECK(caught == "leader task bug");
        auto left = co_await consul.async_session_list();
        CHECK(left.sessions.empty());
        co_await consul.async_kv_delete(p + "leader");
    };
    run(ioc, body());
}

// Two electors of one process on one key, sharing a session: one leads at a time (the lock
// beneath them does not let a session's second acquire share the key).
TEST_CASE_METHOD(recipes_fixture, "electors sharing one session take turns leading",
                 "[elector][shared-session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        elector first{consul, p + "leader", elector_options{}.with_value("first")};
        elector second{consul, p + "leader", elector_options{}.with_value("second")};
        int leading = 0, most = 0, terms = 0;
        asio::steady_timer done{ioc, asio::steady_timer::time_point::max()};
        // Each term ends by itself after a moment; the elector then campaigns again.
        auto term = [&](leadership) -> asio::awaitable<void> {
            most = std::max(most, ++leading);
            co_await sleep(5ms);
            --leading;
            if (++terms == 10)
                done.cancel();
        };
        auto wait_done = [&]() -> asio::awaitable<void> {
            co_await done.async_wait(awaitable_tuple);
        };
        co_await (first.async_run(s, term, awaitable_tuple) ||
                  second.async_run(s, term, awaitable_tuple) || wait_done());
        CHECK(terms >= 10);
        CHECK(most == 1);
        co_await consul.async_kv_delete(p + "leader");
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "an elector with a session config reports its sessions",
                 "[elector][own-session]") {
    auto body = [&]() -> asio::awaitable<void> {
        std::vector<session_event> events;
        std::vector<std::string> ids; // of the sessions reported
        auto record = [&](const session_event& e) {
            events.push_back(e);
            ids.push_back(e.current ? e.current->id() : std::string());
        };
        elector el{consul, p + "leader", elector_options{}.with_on_session(record)};
        std::vector<std::string> sessions; // of each term
        asio::steady_timer second_term{ioc, asio::steady_timer::time_point::max()};
        auto task = [&](leadership l) -> asio::awaitable<void> {
            sessions.push_back(l.token().session);
            if (sessions.size() == 1)
                server.expire_session(l.token().session);
            else
                second_term.cancel();
            co_await sleep(20s);
        };
        auto stop = [&]() -> asio::awaitable<void> {
            co_await second_term.async_wait(awaitable_tuple);
        };
        auto outcome = co_await (el.async_run(quick(10s), task, awaitable_tuple) || stop());
        CHECK(outcome.index() == 1);
        REQUIRE(sessions.size() == 2);
        REQUIRE(events.size() == 3);
        CHECK(events[0].what == session_event::kind::created);
        CHECK(ids[0] == sessions[0]);
        CHECK(events[1].what == session_event::kind::lost);
        CHECK(ids[1] == sessions[0]);
        CHECK((events[1].ec == errc::session_invalidated || events[1].ec == errc::session_expired));
        CHECK(events[1].retry_in == std::optional{std::chrono::milliseconds{1000}});
        CHECK(events[2].what == session_event::kind::created);
        CHECK(ids[2] == sessions[1]);

        // A session Consul refuses to create: reported, with no retry, before the run ends.
        events.clear();
        auto [refused] = co_await el.async_run(quick(1ms), task, awaitable_tuple);
        CHECK(refused == errc::invalid_argument);
        REQUIRE(events.size() == 1);
        CHECK(events[0].what == session_event::kind::create_failed);
        CHECK(events[0].current == nullptr);
        CHECK(events[0].ec);
        CHECK(events[0].diag.server_message.find("nvalid") != std::string::npos);
        CHECK_FALSE(events[0].retry_in);
        co_await consul.async_kv_delete(p + "leader");
    };
    run(ioc, body());
}
