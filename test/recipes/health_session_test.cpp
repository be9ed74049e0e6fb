// SPDX-License-Identifier: BSL-1.0
// Sessions bound to health checks: the TTL check the library keeps (session_config::
// health_ttl), checks the user names (node and service checks), a check critical at
// creation, and the library's check deregistered when the session ends.
#include "recipes_fixture.hpp"

#include <conclave/lock.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

// A check ID no other test uses.
std::string fresh_check_id() {
    return "conclave-test-" + random_uuid();
}

// Whether the agent still has `id` as a TTL check: passing it succeeds only then (Consul:
// `CheckID "<id>" does not have associated TTL` otherwise).
asio::awaitable<bool> agent_has_check(client& c, std::string id) {
    auto [ec, ok] = co_await c.async_agent_check_update(std::move(id), check_status::passing, {},
                                                        write_options{}, awaitable_tuple);
    (void)ok;
    co_return !ec;
}

// Waits until the agent no longer has `id` (its deregistration may still be on its way);
// false when it is still there after a generous bound.
asio::awaitable<bool> check_gone(recipes_fixture& f, std::string id) {
    const auto end = std::chrono::steady_clock::now() + 20s;
    for (;;) {
        const bool there = co_await agent_has_check(f.consul, id);
        if (!there)
            co_return true;
        if (std::chrono::steady_clock::now() > end)
            co_return false;
        co_await f.sleep(10ms);
    }
}

// Creates a session bound to a check registered a moment ago: the agent tells the servers
// about a new check soon after, and until then Consul answers that it is missing.
asio::awaitable<session> create_once_synced(recipes_fixture& f, session_config cfg) {
    const auto end = std::chrono::steady_clock::now() + 20s;
    for (;;) {
        auto [ec, s] = co_await session::async_create(f.consul, cfg, awaitable_tuple);
        if (!ec || ec != errc::check_critical || std::chrono::steady_clock::now() > end) {
            REQUIRE_FALSE(ec);
            co_return s;
        }
        co_await f.sleep(10ms);
    }
}

// The text a failed create throws.
asio::awaitable<std::pair<error_code, std::string>> create_failure(client& c, session_config cfg) {
    try {
        auto s = co_await session::async_create(c, std::move(cfg));
        co_await s.async_destroy();
    } catch (const conclave::error& e) {
        co_return std::pair{e.code(), std::string(e.what())};
    }
    co_return std::pair{error_code{}, std::string()};
}

} // namespace

TEST_CASE_METHOD(recipes_fixture,
                 "a lock held with a health-checked session is freed once its check is no "
                 "longer passed",
                 "[session][health]") {
    auto body = [&]() -> asio::awaitable<void> {
        // A session TTL far beyond the test: only the check can free the lock in time.
        auto holder = co_await session::async_create(
            consul, session_config{}.with_ttl(1h).with_lock_delay(0ms).with_health_ttl(2s));
        REQUIRE_FALSE(holder.health_check_id().empty());
        auto waiter = co_await session::async_create(consul, quick());
        lock mutex_a{consul, p + "l"};
        lock mutex_b{consul, p + "l"};
        auto held = co_await mutex_a.async_acquire(holder);
        // The holder stalls: every pass of its check fails from now on; its renewals go on.
        server.inject_errors("/v1/agent/check/pass/", 100000);
        auto scenario = [&]() -> asio::awaitable<void> {
            auto [lost, got] = co_await (held.async_wait_lost(awaitable_tuple) &&
                                         mutex_b.async_acquire(waiter, awaitable_tuple));
            CHECK(lost != errc::timeout);
            REQUIRE_FALSE(std::get<0>(got));
            CHECK(std::get<1>(got).token().session == waiter.id());
            co_await std::get<1>(got).async_release();
        };
        // The holder's run ends when its session is lost (by its own clock first, most
        // likely): the waiter goes on until it has the lock.
        auto holder_side = [&]() -> asio::awaitable<error_code> {
            auto [ec] = co_await holder.async_run(awaitable_tuple);
            co_return ec;
        };
        auto waiter_side = [&]() -> asio::awaitable<void> {
            auto r = co_await (waiter.async_run(awaitable_tuple) || scenario());
            CHECK(r.index() == 1);
        };
        const error_code holder_ended = co_await (holder_side() && waiter_side());
        CHECK((holder_ended == errc::session_expired || holder_ended == errc::session_invalidated));
        CHECK(holder.lost());
        const auto check_id = holder.health_check_id();
        co_await holder.async_destroy();
        co_await waiter.async_destroy();
        co_await mutex_b.async_destroy();
        const bool gone = co_await check_gone(*this, check_id);
        CHECK(gone);
    };
    run(ioc, body(), 90s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "a session bound to a named check is invalidated when the check fails",
                 "[session][health]") {
    const std::string id = fresh_check_id();
    const std::string name = "web";
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_agent_check_register(
            agent_check_options{}.with_id(id).with_name(name).with_ttl(1h).with_status(
                check_status::passing));
        // Consul 1.8 takes a check of the node in either list.
        const std::vector<service_check> checks{service_check{id, {}}};
        const auto cfg = quick().with_service_checks(checks);
        auto s = co_await create_once_synced(*this, cfg);
        auto info = co_await consul.async_session_info(s.id());
        REQUIRE(info.session);
        REQUIRE(info.session->service_checks.size() == 1);
        CHECK(info.session->service_checks.front().id == id);
        lock mutex{consul, p + "l"};
        auto held = co_await mutex.async_acquire(s);
        // Warning is no reason to give the session up.
        const std::string slow = "slow", down = "down";
        co_await consul.async_agent_check_update(id, check_status::warning, slow);
        co_await consul.async_agent_check_update(id, check_status::critical, down);
        auto [lost, run_ended] =
            co_await (held.async_wait_lost(awaitable_tuple) && s.async_run(awaitable_tuple));
        CHECK(lost != errc::timeout);
        CHECK(std::get<0>(run_ended) == errc::session_invalidated);
        CHECK(s.loss_reason() == errc::session_invalidated);
        co_await mutex.async_destroy();
        co_await consul.async_agent_check_deregister(id);
    };
    run(ioc, body(), 60s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "a session bound to a critical or missing check is refused naming the check",
                 "[session][health][errors]") {
    const std::string id = fresh_check_id();
    const std::string name = "web";
    auto body = [&]() -> asio::awaitable<void> {
        // Registered without a status: critical.
        co_await consul.async_agent_check_register(
            agent_check_options{}.with_id(id).with_name(name).with_ttl(1h));
        // The servers may not know it yet ("Missing check"), or know it critical: both
        // name it.
        const auto bound = quick().with_node_checks(std::vector<std::string>{id});
        auto [ec, what] = co_await create_failure(consul, bound);
        CAPTURE(what);
        CHECK(ec == errc::check_critical);
        CHECK_THAT(what, contains_text(id));
        const std::string never = fresh_check_id();
        const auto unknown = quick().with_node_checks(std::vector<std::string>{never});
        std::tie(ec, what) = co_await create_failure(consul, unknown);
        CHECK(ec == errc::check_critical);
        CHECK_THAT(what, contains_text("Missing check '" + never + "' registration"));
        // With a check of the library's own as well: that one is deregistered again.
        const std::vector<service_check> missing{service_check{never, {}}};
        const auto both = quick().with_health_ttl(5s).with_service_checks(missing);
        std::tie(ec, what) = co_await create_failure(consul, both);
        CHECK(ec == errc::check_critical);
        CHECK_THAT(what, contains_text(never));
        co_await consul.async_agent_check_deregister(id);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "the library's check is deregistered when its session is destroyed or its run "
                 "cancelled",
                 "[session][health]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick().with_health_ttl(3s));
        const std::string check = s.health_check_id();
        CHECK(check.starts_with("conclave-session-"));
        auto info = co_await consul.async_session_info(s.id());
        REQUIRE(info.session);
        CHECK(info.session->node_checks == std::vector<std::string>{check});
        const bool registered = co_await agent_has_check(consul, check);
        CHECK(registered);
        co_await s.async_destroy();
        const bool left = co_await agent_has_check(consul, check);
        CHECK_FALSE(left);

        // A cancelled run closes the session in the background: its check goes with it.
        auto t = co_await session::async_create(consul, quick().with_health_ttl(3s));
        const std::string other = t.health_check_id();
        auto r = co_await (t.async_run(awaitable_tuple) || sleep(100ms));
        CHECK(r.index() == 1);
        const bool gone = co_await check_gone(*this, other);
        CHECK(gone);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a health-checked session's run keeps its check passing past the check's TTL",
                 "[session][health]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(20s).with_health_ttl(3s));
        // Several check TTLs, and no renewal due: only the passes keep the session.
        bool alive = false;
        auto observe = [&]() -> asio::awaitable<void> {
            co_await sleep(8s);
            auto info = co_await consul.async_session_info(s.id());
            alive = info.session.has_value();
        };
        auto r = co_await (s.async_run(awaitable_tuple) || observe());
        CHECK(r.index() == 1);
        CHECK(alive);
        CHECK(s.loss_reason() == errc::session_invalidated); // (the cancelled run ended it)
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a health-checked session handed over keeps its check: the successor resumes "
                 "both and keeps the check passing",
                 "[session][health][hot-restart]") {
    client successor{ioc.get_executor(), server.client_config()};
    auto body = [&]() -> asio::awaitable<void> {
        std::string id;
        std::string check;
        {
            auto s = co_await create_once_synced(*this, quick(20s).with_health_ttl(3s));
            id = s.id();
            check = s.health_check_id();
            CHECK(s.hand_over());
        } // (its last handle goes: neither the session nor the check is removed)
        const bool kept = co_await agent_has_check(consul, check);
        CHECK(kept);

        // A pass that fails for another reason than a missing check is that failure (and
        // retrying is the answer), not check_critical.
        server.inject_errors("/v1/agent/check/pass/", 1, 500);
        auto [failed, none] = co_await session::async_resume(successor, id, awaitable_tuple);
        CHECK(failed == errc::server_error);
        CHECK_FALSE(none.valid());

        auto s = co_await session::async_resume(successor, id);
        CHECK(s.health_check_id() == check);
        CHECK(s.config().health_ttl == 3s);
        CHECK(s.config().node_checks.empty()); // (the library's check is kept apart)
        // Several check TTLs, and no renewal due: only the successor's passes keep it.
        bool alive = false;
        auto observe = [&]() -> asio::awaitable<void> {
            co_await sleep(8s);
            auto info = co_await consul.async_session_info(id);
            alive = info.session.has_value();
        };
        auto r = co_await (s.async_run(awaitable_tuple) || observe());
        CHECK(r.index() == 1);
        CHECK(alive);
        co_await s.async_destroy();
        const bool gone = co_await check_gone(*this, check);
        CHECK(gone);
    };
    run(ioc, body());
}
