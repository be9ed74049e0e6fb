// SPDX-License-Identifier: BSL-1.0
// What a client and its recipes report: conclave::metrics counting requests, connections,
// blocking queries, acquires and handoffs, renewals, jeopardy, losses and leadership; and the
// logger, which filters by level and never writes the ACL token.
#include "recipes_fixture.hpp"

#include <conclave/elector.hpp>
#include <conclave/lock.hpp>
#include <conclave/metrics.hpp>
#include <conclave/multi_lock.hpp>
#include <conclave/semaphore.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <functional>
#include <optional>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

using labels = std::vector<std::pair<std::string, std::string>>;

// A client of the fixture's server that reports to `m` (and to `log`, when given).
client_config observed(const backend& server, std::shared_ptr<metrics> m, logger log = {}) {
    auto cfg = server.client_config();
    cfg.observer = std::move(m);
    cfg.log = std::move(log);
    return cfg;
}

} // namespace

TEST_CASE_METHOD(recipes_fixture, "metrics count requests by endpoint and status, and connections",
                 "[observe]") {
    auto m = std::make_shared<metrics>();
    client c{ioc.get_executor(), observed(server, m)};
    auto body = [&]() -> asio::awaitable<void> {
        co_await c.async_kv_put(p + "a", "1");
        auto got = co_await c.async_kv_get(p + "a");
        auto absent = co_await c.async_kv_get(p + "absent");
        CHECK(got.entry);
        CHECK_FALSE(absent.entry);
        CHECK(m->value("http_requests_total", {{"endpoint", "kv_put"}, {"code", "200"}}) == 1);
        CHECK(m->value("http_requests_total", {{"endpoint", "kv_get"}, {"code", "200"}}) == 1);
        CHECK(m->value("http_requests_total", {{"endpoint", "kv_get"}, {"code", "404"}}) == 1);
        CHECK(m->value("http_request_duration_seconds_count", {{"endpoint", "kv_get"}}) == 2);
        CHECK(m->value("http_request_duration_seconds_sum", {{"endpoint", "kv_get"}}) > 0);
        CHECK(m->value("http_connections") >= 1);
        CHECK(m->value("http_connections_opened_total") >= 1);

        // A blocking query is in flight until a write answers it.
        auto wait_for_write = [&]() -> asio::awaitable<void> {
            co_await c.async_kv_get(p + "a", query_options::blocking(got.entry->modify_index, 30s));
        };
        auto write_when_waiting = [&]() -> asio::awaitable<void> {
            // (g++ 12 evaluates a co_await inside CHECK twice: awaited first)
            const bool waiting =
                co_await eventually(ioc, [&] { return m->value("http_blocking_queries") == 1; });
            CHECK(waiting);
            co_await c.async_kv_put(p + "a", "2");
            asio::steady_timer forever{ioc, std::chrono::steady_clock::time_point::max()};
            co_await forever.async_wait(asio::deferred);
        };
        co_await (wait_for_write() || write_when_waiting());
        CHECK(m->value("http_blocking_queries") == 0);
        // Blocking queries count as requests, not in the duration histogram.
        CHECK(m->value("http_requests_total", {{"endpoint", "kv_get"}, {"code", "200"}}) == 2);
        CHECK(m->value("http_request_duration_seconds_count", {{"endpoint", "kv_get"}}) == 2);

        // A request that gets no reply is counted by what ended it.
        server.inject_disconnects("/v1/kv/", 1);
        auto [ec, r] = co_await c.async_kv_put(p + "b", "1", kv_put_options{}, tuple_token);
        CHECK(ec);
        CHECK(m->value("http_requests_total", {{"endpoint", "kv_put"}, {"code", "failed"}}) == 1);

        co_await c.async_kv_delete(p, kv_delete_options{}.with_recurse());
    };
    run(ioc, body());
    // Closing the client closes its idle connections: the gauge goes back to zero.
    c.close();
    CHECK(m->value("http_connections") == 0);
    const std::string text = to_prometheus(*m);
    CHECK(text.find("conclave_http_requests_total{code=\"404\",endpoint=\"kv_get\"} 1\n") !=
          std::string::npos);
    CHECK(text.find("conclave_http_blocking_queries 0\n") != std::string::npos);
}

TEST_CASE_METHOD(recipes_fixture, "metrics count acquires, handoffs and lost grants", "[observe]") {
    auto m = std::make_shared<metrics>();
    client c{ioc.get_executor(), observed(server, m)};
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(c, quick(10s));
        auto b = co_await session::async_create(c, quick(10s));
        lock la{c, p + "l"};
        lock lb{c, p + "l"};
        auto first = co_await la.async_acquire(a);
        // b waits behind a; a's release hands it the key in the same transaction.
        std::optional<lock_lease> second;
        auto second_acquire = [&]() -> asio::awaitable<void> {
            second = co_await lb.async_acquire(b);
        };
        auto release_when_waiting = [&]() -> asio::awaitable<void> {
            // (b's acquire waits on the key's blocking query once it has seen the key held)
            const bool waiting =
                co_await eventually(ioc, [&] { return m->value("http_blocking_queries") == 1; });
            CHECK(waiting);
            co_await first.async_release();
        };
        co_await (second_acquire() && release_when_waiting());
        REQUIRE(second);
        CHECK(m->value("acquires_total", {{"kind", "lock"}, {"outcome", "taken"}}) == 1);
        CHECK(m->value("acquires_total", {{"kind", "lock"}, {"outcome", "handed_over"}}) == 1);
        CHECK(m->value("acquire_wait_seconds_count", {{"kind", "lock"}}) == 2);

        // Someone deletes the key under b: its lease is lost (lock_lost), once seen.
        co_await consul.async_kv_delete(p + "l");
        auto lost_reason = co_await second->async_wait_lost(awaitable_tuple);
        CHECK(std::get<0>(lost_reason) == errc::lock_lost);
        CHECK(m->value("lost_total", {{"kind", "lock"}, {"reason", "lock_lost"}}) == 1);

        // A try-acquire that runs out of budget, and a semaphore's permit.
        semaphore sem{c, p + "s", 1};
        auto permit = co_await sem.async_acquire(a);
        auto none = co_await sem.async_try_acquire(b, 0ms);
        CHECK_FALSE(none);
        CHECK(m->value("acquires_total", {{"kind", "semaphore"}, {"outcome", "taken"}}) == 1);
        CHECK(m->value("acquires_total", {{"kind", "semaphore"}, {"outcome", "timed_out"}}) == 1);
        co_await permit.async_release();
        // Released, not lost: no loss is counted for it.
        CHECK(m->value("lost_total", {{"kind", "semaphore"}, {"reason", "lock_lost"}}) == 0);
        co_await sem.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
        // Destroyed by us: not a loss either.
        CHECK(m->value("lost_total", {{"kind", "session"}, {"reason", "session_invalidated"}}) ==
              0);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "metrics count a multi-lock's acquires and losses as its own",
                 "[observe][multi_lock]") {
    auto m = std::make_shared<metrics>();
    client c{ioc.get_executor(), observed(server, m)};
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(c, quick(10s));
        multi_lock set{c, {p + "x", p + "y"}};
        auto lease = co_await set.async_acquire(a);
        auto none = co_await set.async_try_acquire(a, 0ms); // its own grant holds the keys
        CHECK_FALSE(none);
        CHECK(m->value("acquires_total", {{"kind", "multi_lock"}, {"outcome", "taken"}}) == 1);
        CHECK(m->value("acquires_total", {{"kind", "multi_lock"}, {"outcome", "timed_out"}}) == 1);
        CHECK(m->value("acquires_total", {{"kind", "lock"}, {"outcome", "taken"}}) == 0);
        CHECK(m->value("lost_total", {{"kind", "multi_lock"}, {"reason", "lock_lost"}}) == 0);
        co_await consul.async_kv_delete(p + "y"); // someone deletes one key of the set
        auto lost_reason = co_await lease.async_wait_lost(awaitable_tuple);
        CHECK(std::get<0>(lost_reason) == errc::lock_lost);
        CHECK(m->value("lost_total", {{"kind", "multi_lock"}, {"reason", "lock_lost"}}) == 1);
        co_await lease.async_release();
        co_await consul.async_kv_delete(p, kv_delete_options{}.with_recurse());
        co_await a.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "metrics count renewals, jeopardy, recovery and a lost session",
                 "[observe]") {
    auto m = std::make_shared<metrics>();
    client c{ioc.get_executor(), observed(server, m)};
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(c, quick(4s));
        auto watch = [&]() -> asio::awaitable<void> {
            // The renewal at TTL/2 fails (500); the retry succeeds.
            server.inject_errors("/v1/session/renew/", 1, 500);
            auto [ec, now] =
                co_await s.async_wait_health_change(hold_health::held, awaitable_tuple);
            CHECK(now == hold_health::jeopardy);
            auto [ec2, again] =
                co_await s.async_wait_health_change(hold_health::jeopardy, awaitable_tuple);
            CHECK(again == hold_health::held);
            (void)ec;
            (void)ec2;
        };
        co_await (s.async_run(awaitable_tuple) || watch());
        CHECK(m->value("session_renewals_total", {{"result", "failed"}}) == 1);
        CHECK(m->value("session_renewals_total", {{"result", "ok"}}) >= 1);
        CHECK(m->value("session_renew_duration_seconds_count") >= 2);
        CHECK(m->value("jeopardy_total", {{"kind", "session"}, {"reason", "server_error"}}) == 1);
        CHECK(m->value("recovered_total", {{"kind", "session"}}) == 1);
        // Cancelling the run ends the session: ours, not a loss.
        CHECK(m->value("lost_total", {{"kind", "session"}, {"reason", "session_invalidated"}}) ==
              0);

        // A session that Consul ends is lost, with the reason.
        auto t = co_await session::async_create(c, quick(4s));
        auto lost = [&]() -> asio::awaitable<error_code> {
            CHECK(server.expire_session(t.id()));
            co_return std::get<0>(co_await t.async_wait_lost(awaitable_tuple));
        };
        auto outcome = co_await (t.async_run(awaitable_tuple) || lost());
        CHECK(m->value("lost_total", {{"kind", "session"}, {"reason", "session_invalidated"}}) ==
              1);
        (void)outcome;
        co_await wait_no_sessions(5000ms);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "metrics count an elector's leadership changes", "[observe]") {
    auto m = std::make_shared<metrics>();
    client c{ioc.get_executor(), observed(server, m)};
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(c, quick(10s));
        elector el{c, p + "leader", elector_options{}.with_resign_holdoff(0ms)};
        int terms = 0;
        leader_task lead = [&](leadership) -> asio::awaitable<void> {
            ++terms;
            asio::steady_timer forever{ioc, std::chrono::steady_clock::time_point::max()};
            co_await forever.async_wait(asio::deferred);
        };
        auto resign_then_stop = [&]() -> asio::awaitable<void> {
            const bool leading = co_await eventually(ioc, [&] { return terms == 1; });
            CHECK(leading);
            CHECK(m->value("leading") == 1);
            co_await el.async_resign();
            const bool again = co_await eventually(ioc, [&] { return terms == 2; });
            CHECK(again);
        };
        co_await (el.async_run(s, lead, awaitable_tuple) || resign_then_stop());
        CHECK(m->value("leadership_changes_total", {{"change", "began"}}) == 2);
        CHECK(m->value("leadership_changes_total", {{"change", "ended"}, {"cause", "resigned"}}) ==
              1);
        CHECK(m->value("leadership_changes_total", {{"change", "ended"}, {"cause", "stopped"}}) ==
              1);
        CHECK(m->value("leading") == 0);
        co_await s.async_destroy();
        lock key{c, p + "leader"}; // (the released key stays: remove it)
        co_await key.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "the logger writes lines at its level and never the ACL token",
                 "[observe]") {
    const std::string token = "0b5e6c1d-7f3a-4e2b-9c8d-secret-token";
    std::vector<std::pair<log_level, std::string>> lines;
    auto cfg = server.client_config();
    cfg.token = token;
    cfg.log = logger{log_level::trace, [&](log_level l, std::string_view line) {
                         lines.emplace_back(l, std::string(line));
                     }};
    std::size_t warnings = 0;
    auto quiet_cfg = server.client_config();
    quiet_cfg.token = token;
    quiet_cfg.log = logger{log_level::warning, [&](log_level, std::string_view) { ++warnings; }};
    client c{ioc.get_executor(), cfg};
    client quiet{ioc.get_executor(), quiet_cfg};
    auto body = [&]() -> asio::awaitable<void> {
        for (client* each : {&c, &quiet}) {
            auto s = co_await session::async_create(*each, quick(10s));
            lock l{*each, p + "l"};
            auto lease = co_await l.async_acquire(s);
            auto r = co_await each->async_kv_get(p + "l");
            co_await each->async_kv_get(p + "l", query_options::blocking(r.meta.index, 10ms));
            co_await lease.async_release();
            co_await l.async_destroy();
            co_await s.async_destroy();
        }
    };
    run(ioc, body());
    CHECK(warnings == 0); // nothing went wrong: nothing at warning or above
    const auto has = [&](log_level level, std::string_view text) {
        return std::any_of(lines.begin(), lines.end(), [&](const auto& l) {
            return l.first == level && l.second.find(text) != std::string::npos;
        });
    };
    CHECK(has(log_level::debug, "PUT /v1/session/create -> 200 in "));
    CHECK(has(log_level::trace, "GET /v1/kv/" + p + "l?index="));
    CHECK(has(log_level::trace, "connection 1 opened to "));
    CHECK(has(log_level::info, " created (TTL 10000.0 ms)"));
    CHECK(has(log_level::info, "lock " + p + "l acquired (taken) after "));
    CHECK(has(log_level::info, " destroyed"));
    for (const auto& [level, line] : lines)
        CHECK(line.find(token) == std::string::npos);
}
