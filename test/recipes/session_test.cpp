// SPDX-License-Identifier: BSL-1.0
// conclave::session: creation, renewal, the local deadline, loss, cancellation, cleanup.
#include "recipes_fixture.hpp"

#include <conclave/lock.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>

#include <stdexcept>
#include <tuple>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using steady = std::chrono::steady_clock;

TEST_CASE_METHOD(recipes_fixture, "a session is created as configured and destroyed on request",
                 "[session]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto before = steady::now();
        auto s = co_await session::async_create(
            consul, session_config{}.with_name("cfg").with_ttl(2s).with_lock_delay(0ms));
        CHECK(s.valid());
        CHECK_FALSE(s.lost());
        CHECK(s.deadline() >= before + 2s);
        CHECK(s.deadline() <= steady::now() + 2s);
        auto info = co_await consul.async_session_info(s.id());
        REQUIRE(info.session);
        CHECK(info.session->name == "cfg");
        CHECK(info.session->ttl == 2s);
        CHECK(info.session->lock_delay == 0ns);
        CHECK(info.session->node_checks.empty()); // TTL sessions carry no node checks
        co_await s.async_destroy();
        CHECK(s.lost());
        CHECK(s.loss_reason() == errc::session_invalidated);
        auto gone = co_await consul.async_session_info(s.id());
        CHECK_FALSE(gone.session);
        co_await s.async_destroy(); // idempotent
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a session Consul refuses throws Consul's reason",
                 "[session][errors]") {
    auto body = [&]() -> asio::awaitable<void> {
        std::string what;
        try {
            co_await session::async_create(consul, session_config{}.with_ttl(100h));
        } catch (const conclave::error& e) {
            CHECK(e.code() == errc::server_error);
            what = e.what();
        }
        CHECK(what.find("Invalid Session TTL") != std::string::npos);
        // Refused before asking Consul: conclave says why.
        what.clear();
        try {
            co_await session::async_create(consul, session_config{}.with_ttl(0ms));
        } catch (const conclave::error& e) {
            CHECK(e.code() == errc::invalid_argument);
            what = e.what();
        }
        CHECK(what.find("TTL must be positive") != std::string::npos);
    };
    run(ioc, body());
}

// Every recipe starts with a session: a client in a namespace Consul cannot serve learns it
// there, in Consul's words, and nothing is left behind.
TEST_CASE_METHOD(recipes_fixture,
                 "a namespace Consul without Enterprise refuses fails the session with its words",
                 "[session][errors]") {
    auto cfg = server.client_config();
    cfg.namespace_name = "team-a";
    client in_namespace{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        std::optional<conclave::error> failure;
        try {
            co_await session::async_create(in_namespace, session_config{});
        } catch (const conclave::error& e) {
            failure = e;
        }
        REQUIRE(failure);
        CHECK(failure->code() == errc::bad_request);
        CHECK(std::string(failure->what()).find("Namespaces are a Consul Enterprise feature") !=
              std::string::npos);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "async_run keeps the session alive past several TTLs",
                 "[session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, session_config{}.with_ttl(300ms));
        const auto first_deadline = s.deadline();
        // 1.5 s = 5 TTLs: without renewals the agent would expire it after 2 TTLs.
        auto outcome = co_await (s.async_run(asio::as_tuple(asio::use_awaitable)) || sleep(1500ms));
        CHECK(outcome.index() == 1); // the timer ended it, not the run
        // The run was cancelled by ||: it is lost at once, destroyed in the background.
        CHECK(s.lost());
        co_await wait_no_sessions(3000ms);
        auto info = co_await consul.async_session_info(s.id());
        CHECK_FALSE(info.session);
        CHECK(s.deadline() > first_deadline + 900ms); // it was renewed all along
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a cancelled run completes with operation_aborted", "[session]") {
    auto body = [&]() -> asio::awaitable<error_code> {
        auto s = co_await session::async_create(consul, session_config{}.with_ttl(1s));
        asio::cancellation_signal cancel;
        asio::steady_timer t{ioc, 100ms};
        t.async_wait([&](error_code) { cancel.emit(asio::cancellation_type::terminal); });
        auto [ec] =
            co_await s.async_run(asio::bind_cancellation_slot(cancel.slot(), awaitable_tuple));
        CHECK(s.lost());
        co_await wait_no_sessions(3000ms); // destroyed in the background
        auto info = co_await consul.async_session_info(s.id());
        CHECK_FALSE(info.session);
        co_return ec;
    };
    CHECK(run(ioc, body()) == asio::error::operation_aborted);
}

// A cancelled run destroys the session after the releases its grants' holders are about
// to make (see the elector's test of `s.async_run || el.async_run`), but a grant nobody
// releases holds the destroy up for destroy_timeout at most.
TEST_CASE_METHOD(recipes_fixture,
                 "a cancelled run destroys its session even while a lease nobody releases is held",
                 "[session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s).with_destroy_timeout(500ms));
        lock l{consul, p + "l"};
        auto lease = co_await l.async_acquire(s);
        asio::cancellation_signal cancel;
        asio::steady_timer t{ioc, 100ms};
        t.async_wait([&](error_code) { cancel.emit(asio::cancellation_type::terminal); });
        auto [ec] =
            co_await s.async_run(asio::bind_cancellation_slot(cancel.slot(), awaitable_tuple));
        CHECK(ec == asio::error::operation_aborted);
        CHECK_FALSE(lease.held());      // ended with its session: never reported held after
        co_await wait_no_sessions(10s); // destroyed in the background, lease still in hand
        auto key = co_await consul.async_kv_get(p + "l");
        REQUIRE(key.entry);
        CHECK(key.entry->session.empty()); // freed by the destroy
        co_await consul.async_kv_delete(p + "l");
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "an invalidated session ends the run and wakes loss waiters",
                 "[session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, session_config{}.with_ttl(10s));
        auto invalidate = [&]() -> asio::awaitable<void> {
            co_await sleep(200ms);
            server.expire_session(s.id());
        };
        error_code run_ec, lost_ec;
        auto run_task = [&]() -> asio::awaitable<void> {
            auto [ec] = co_await s.async_run(awaitable_tuple);
            run_ec = ec;
        };
        auto lost_task = [&]() -> asio::awaitable<void> {
            auto [ec] = co_await s.async_wait_lost(awaitable_tuple);
            lost_ec = ec;
        };
        const auto start = steady::now();
        co_await (run_task() && lost_task() && invalidate());
        // The run notices at its next renew (TTL/2 = 5 s at the latest); the waiter with it.
        CHECK(run_ec == errc::session_invalidated);
        CHECK(lost_ec == errc::session_invalidated);
        CHECK(steady::now() - start < 6s);
        CHECK(s.lost());
    };
    run(ioc, body(), 15s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "with renewals failing, the session is lost at its local deadline, "
                 "before Consul could expire it",
                 "[session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, session_config{}.with_ttl(400ms));
        server.inject_errors("/v1/session/renew/", 1000, 500);
        const auto deadline = s.deadline();
        const auto requests_before = server.stats().requests;
        auto [ec] = co_await s.async_run(tuple_token);
        const auto noticed = steady::now();
        // It retried with backoff, not in a busy loop (first try at TTL/2, then ~4 more).
        CHECK(server.stats().requests - requests_before <= 8);
        // The true reason: no renewal got through. Consul has not invalidated it.
        CHECK(ec == errc::session_expired);
        CHECK(s.loss_reason() == errc::session_expired);
        CHECK(noticed >= deadline);
        CHECK(noticed < deadline + 200ms);
        // Consul (TTL x 2) still holds it: nobody else can have taken what it held.
        auto info = co_await consul.async_session_info(s.id());
        CHECK(info.session);
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "transient renew failures are survived within the TTL",
                 "[session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, session_config{}.with_ttl(1s));
        // Two failures cost at most two short backoffs (ttl/16, ttl/8): far inside the TTL.
        server.inject_errors("/v1/session/renew/", 2, 500);
        auto outcome = co_await (s.async_run(awaitable_tuple) || sleep(2500ms));
        CHECK(outcome.index() == 1);
        CHECK(s.deadline() > steady::now() - 2500ms + 1s); // renewed after the failures
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "waiting for loss can be cancelled without touching the session",
                 "[session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, session_config{}.with_ttl(5s));
        auto outcome = co_await (s.async_wait_lost(awaitable_tuple) || sleep(100ms));
        CHECK(outcome.index() == 1);
        CHECK_FALSE(s.lost());
        auto info = co_await consul.async_session_info(s.id());
        CHECK(info.session);
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a session nobody closed is destroyed when its last handle goes",
                 "[session]") {
    auto body = [&]() -> asio::awaitable<void> {
        std::string id;
        {
            auto s = co_await session::async_create(consul, session_config{}.with_ttl(30s));
            id = s.id();
        }
        co_await wait_no_sessions(3s);
        auto info = co_await consul.async_session_info(id);
        CHECK_FALSE(info.session);
    };
    run(ioc, body());
}

// The "detached renewals" pattern: a run spawned detached beside a body that throws. The
// run holds no handle, so the body's end (its handle gone) stops it and destroys the
// session.
TEST_CASE_METHOD(recipes_fixture,
                 "a detached run stops and destroys its session once no handle is left",
                 "[session]") {
    auto body = [&]() -> asio::awaitable<void> {
        int runs_ended = 0;
        constexpr int bodies = 1000;
        for (int i = 0; i < bodies; ++i) {
            try {
                auto s = co_await session::async_create(consul, quick(10s));
                asio::co_spawn(ioc, s.async_run(awaitable_tuple),
                               [&](std::exception_ptr, std::tuple<error_code> r) {
                                   runs_ended += std::get<0>(r) == asio::error::operation_aborted;
                               });
                co_await asio::post(ioc, asio::use_awaitable);
                throw std::runtime_error("the body failed");
            } catch (const std::runtime_error&) {
            }
        }
        co_await wait_no_sessions(10s);
        auto left = co_await consul.async_session_list();
        CHECK(left.sessions.empty());
        CHECK(runs_ended == bodies);
    };
    run(ioc, body());
}

// Racing by hand (for experts): with as_outcome nothing throws, so `||` ends with whichever
// side ends first, a failure included.
TEST_CASE_METHOD(recipes_fixture, "as_outcome races a session's run against an acquire",
                 "[session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        auto other = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "l"};
        auto theirs = co_await mutex.async_acquire(other);
        // The acquire waits behind `other`; the session is lost meanwhile. Whichever side
        // sees it first ends the race with the loss as a value (no exception), and the
        // other side is cancelled.
        server.expire_session(s.id());
        auto ended = co_await (s.async_run(as_outcome) || mutex.async_acquire(s, as_outcome));
        const auto failure =
            ended.index() == 0 ? std::get<0>(std::get<0>(ended)) : std::get<0>(std::get<1>(ended));
        CHECK(error_code_of(failure) == errc::session_invalidated);
        co_await theirs.async_release();
        co_await mutex.async_destroy();
        co_await other.async_destroy();
    };
    run(ioc, body());
}
