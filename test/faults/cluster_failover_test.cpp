// SPDX-License-Identifier: BSL-1.0
// A three-server Consul cluster loses a server (SIGKILL: a crash) while a lock, a semaphore
// permit or an elector's term is held and another process waits for it: the Raft leader (the
// holder and the waiter on followers), or the holder's own server. Whatever happens, the
// holder keeps its grant or learns that it lost it before the waiter is granted (for the
// elector: never two terms at once); then the waiter gets it, and nothing is left behind.
// Runs on the test cluster only (label consul-cluster); prints the times docs/failover.md
// quotes.
#include "support/backend.hpp"
#include "support/catch.hpp"
#include "support/countdown.hpp"
#include "support/fault_proxy.hpp"
#include "support/run.hpp"

#include <conclave/client.hpp>
#include <conclave/elector.hpp>
#include <conclave/lock.hpp>
#include <conclave/semaphore.hpp>
#include <conclave/session.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

using steady = std::chrono::steady_clock;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

double seconds_between(steady::time_point a, steady::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

struct cluster_fixture {
    asio::io_context ioc;
    backend server{ioc};
    consul_server* cluster = server.consul();
    std::string p = server.prefix();

    bool skip() const {
        if (cluster && cluster->size() >= 3)
            return false;
        std::printf("CONCLAVE-SKIPPED: needs the three-server test cluster\n");
        return true;
    }

    // A client of server `i` alone (as a service on that server's host would be).
    client client_of(std::size_t i) {
        client_config cfg;
        cfg.host = "127.0.0.1";
        cfg.port = cluster->http_port(i);
        cfg.request_timeout = 5s;
        return client{ioc.get_executor(), cfg};
    }

    // A client of the server `proxy` (started) forwards to, through it: the proxy can tell
    // when an answer is in.
    client client_through(fault_proxy& proxy) {
        client_config cfg;
        cfg.host = "127.0.0.1";
        cfg.port = proxy.port();
        cfg.request_timeout = 5s;
        return client{ioc.get_executor(), cfg};
    }

    asio::awaitable<void> sleep(std::chrono::milliseconds d) {
        asio::steady_timer t{ioc, d};
        co_await t.async_wait(asio::use_awaitable);
    }

    // Sessions and keys under the prefix left on the cluster, as `c` sees them once the
    // sessions are gone or `limit` passed (blocking reads: no polling).
    asio::awaitable<std::pair<std::size_t, std::size_t>>
    leftovers(client& c, std::chrono::milliseconds limit) {
        const auto end = steady::now() + limit;
        std::uint64_t index = 0;
        std::size_t sessions = 0;
        while (steady::now() < end) {
            auto r = co_await c.async_session_list(query_options::blocking(index, 500ms));
            sessions = r.sessions.size();
            if (sessions == 0)
                break;
            index = r.meta.index;
        }
        auto keys = co_await c.async_kv_keys(p);
        co_return std::pair<std::size_t, std::size_t>{sessions, keys.keys.size()};
    }

    // A renewed session of `c` (renewals run until it is lost or destroyed): short TTL, no
    // lock-delay, no node checks (a dead server's node would end it at once).
    asio::awaitable<session>
    running_session(client& c, std::chrono::seconds ttl,
                    session_behavior behavior = session_behavior::release) {
        auto cfg = session_config{}.with_ttl(ttl).with_lock_delay(0ms).with_behavior(behavior);
        cfg.with_node_checks(std::vector<std::string>{});
        auto s = co_await session::async_create(c, cfg);
        asio::co_spawn(ioc, s.async_run(tuple_awaitable), asio::detached);
        co_return s;
    }

    // One write through `c`, retried until it succeeds: when writes resume.
    asio::awaitable<steady::time_point> first_write(client& c, const std::string& key) {
        for (;;) {
            auto [ec, done] =
                co_await c.async_kv_put(key, "probe", kv_put_options{}, tuple_awaitable);
            if (!ec && done)
                co_return steady::now();
            co_await sleep(20ms); // (polling is the measurement: no event says it)
        }
    }
};

// What one side of the hand-over saw.
struct timeline {
    std::optional<steady::time_point> holder_lost;
    std::optional<steady::time_point> waiter_granted;
    error_code loss;
};

// Holder on server `holder_at`, waiter on server `waiter_at`; then server `killed` dies.
asio::awaitable<void> hand_over(cluster_fixture& f, std::size_t holder_at, std::size_t waiter_at,
                                std::size_t killed, bool holder_releases,
                                std::chrono::seconds ttl) {
    client holder_client = f.client_of(holder_at);
    client waiter_client = f.client_of(waiter_at);
    auto a = co_await f.running_session(holder_client, ttl);
    auto b = co_await f.running_session(waiter_client, ttl);
    lock held{holder_client, f.p + "l"};
    lock wanted{waiter_client, f.p + "l"};
    auto lease = co_await held.async_acquire(a);
    const auto token_a = lease.token();

    timeline t;
    lock_lease next;
    asio::steady_timer granted{f.ioc, 1h};
    auto wait = [&]() -> asio::awaitable<void> {
        next = co_await wanted.async_acquire(b, asio::use_awaitable);
        t.waiter_granted = steady::now();
        granted.cancel();
    };
    auto watch_loss = [&]() -> asio::awaitable<void> {
        auto [ec] = co_await lease.async_wait_lost(tuple_awaitable);
        if (ec == asio::error::operation_aborted)
            co_return;
        t.loss = ec;
        t.holder_lost = steady::now();
    };
    asio::co_spawn(f.ioc, wait(), asio::detached);
    asio::co_spawn(f.ioc, watch_loss(), asio::detached);

    const auto killed_at = steady::now();
    f.cluster->kill(killed);
    // Writes resume through the waiter's server (a new leader, if the leader died).
    const auto resumed = co_await f.first_write(waiter_client, f.p + "probe");
    std::printf("failover (TTL %lld s): server %zu killed (%s): writes resume after %.2f s\n",
                static_cast<long long>(ttl.count()), killed,
                holder_releases ? "the leader" : "the holder's",
                seconds_between(killed_at, resumed));
    if (holder_releases) {
        // The holder's server is alive: it keeps its grant through the election, then
        // releases it. An election that outlasts the monitor's retry budget (3 failed reads
        // a second apart; a loaded machine makes elections slower) makes the holder report
        // the loss instead, as it cannot see the key: safe, since nobody gets the lock
        // before it releases.
        CHECK_FALSE(t.waiter_granted);
        if (!lease.held()) {
            REQUIRE(t.holder_lost);
            CHECK(t.loss == errc::lock_lost);
            std::printf("failover: the holder's monitor gave up during the election (%s)\n",
                        t.loss.message().c_str());
        }
        co_await lease.async_release();
    }
    if (!t.waiter_granted)
        co_await granted.async_wait(tuple_awaitable);
    REQUIRE(t.waiter_granted);
    std::printf("failover: waiter granted %.2f s after the kill\n",
                seconds_between(killed_at, *t.waiter_granted));
    if (!holder_releases) {
        // The holder could not reach Consul: it must have known before the waiter got it.
        REQUIRE(t.holder_lost);
        INFO(t.loss.message());
        CHECK(*t.holder_lost <= *t.waiter_granted);
        CHECK_FALSE(lease.held());
        std::printf("failover: holder knew it lost at %.2f s (%s)\n",
                    seconds_between(killed_at, *t.holder_lost), t.loss.message().c_str());
    }
    CHECK(next.token().modify_index > token_a.modify_index);
    co_await next.async_release();
    co_await wanted.async_destroy();
    co_await b.async_destroy();
    co_await a.async_destroy(tuple_awaitable); // (unreachable when its server is gone)
    co_await waiter_client.async_kv_delete(f.p + "probe");
    const auto [sessions, keys] = co_await f.leftovers(waiter_client, 2 * ttl);
    CHECK(sessions == 0); // (a session on the dead server: Consul expired it)
    CHECK(keys == 0);
}

} // namespace

TEST_CASE_METHOD(cluster_fixture,
                 "cluster: the leader server dies while a lock is held: the holder keeps it, "
                 "the waiter gets it after the release",
                 "[failover][cluster]") {
    if (skip())
        return;
    const auto leader = cluster->leader();
    REQUIRE(leader);
    const std::size_t holder_at = (*leader + 1) % 3, waiter_at = (*leader + 2) % 3;
    // (A TTL the election fits in: the holder's renewals wait for the new leader.)
    run(ioc, hand_over(*this, holder_at, waiter_at, *leader, true, 10s), 90s);
}

TEST_CASE_METHOD(cluster_fixture,
                 "cluster: the holder's server dies: the holder learns its loss before the "
                 "waiter is granted",
                 "[failover][cluster]") {
    if (skip())
        return;
    const auto leader = cluster->leader();
    REQUIRE(leader);
    // The holder on a follower that dies; the waiter on the leader.
    const std::size_t holder_at = (*leader + 1) % 3;
    run(ioc, hand_over(*this, holder_at, *leader, holder_at, false, 5s), 90s);
}

TEST_CASE_METHOD(cluster_fixture,
                 "cluster: the leading candidate's server dies: its term ends before the other "
                 "candidate's begins",
                 "[failover][cluster]") {
    if (skip())
        return;
    const auto raft_leader = cluster->leader();
    REQUIRE(raft_leader);
    const std::size_t first_at = (*raft_leader + 1) % 3; // the server that dies
    client first_client = client_of(first_at);
    client second_client = client_of(*raft_leader);
    auto body = [&]() -> asio::awaitable<void> {
        auto s1 = co_await running_session(first_client, 5s);
        auto s2 = co_await running_session(second_client, 5s);
        elector first{first_client, p + "leader"};
        elector second{second_client, p + "leader"};
        std::optional<steady::time_point> first_term_ended, second_term_began;
        asio::steady_timer first_leads{ioc, 1h}, second_leads{ioc, 1h};
        leader_task first_task = [&](leadership) -> asio::awaitable<void> {
            first_leads.cancel();
            asio::steady_timer forever{ioc, 1h};
            co_await forever.async_wait(tuple_awaitable); // until cancelled: leadership lost
            first_term_ended = steady::now();
        };
        leader_task second_task = [&](leadership) -> asio::awaitable<void> {
            second_term_began = steady::now();
            second_leads.cancel();
            asio::steady_timer forever{ioc, 1h};
            co_await forever.async_wait(tuple_awaitable);
        };
        asio::cancellation_signal stop_first, stop_second;
        int campaigns_over = 0;
        asio::steady_timer both_over{ioc, 1h};
        const auto campaign_over = [&](std::exception_ptr, auto) {
            if (++campaigns_over == 2)
                both_over.cancel();
        };
        asio::co_spawn(ioc, first.async_run(s1, first_task, tuple_awaitable),
                       asio::bind_cancellation_slot(stop_first.slot(), campaign_over));
        co_await first_leads.async_wait(tuple_awaitable);
        asio::co_spawn(ioc, second.async_run(s2, second_task, tuple_awaitable),
                       asio::bind_cancellation_slot(stop_second.slot(), campaign_over));

        const auto killed_at = steady::now();
        cluster->kill(first_at);
        co_await second_leads.async_wait(tuple_awaitable);
        REQUIRE(second_term_began);
        REQUIRE(first_term_ended);
        CHECK(*first_term_ended <= *second_term_began);
        std::printf("failover: leader's server killed: its term ended at %.2f s, the next "
                    "began at %.2f s\n",
                    seconds_between(killed_at, *first_term_ended),
                    seconds_between(killed_at, *second_term_began));
        stop_second.emit(asio::cancellation_type::terminal);
        stop_first.emit(asio::cancellation_type::terminal);
        if (campaigns_over < 2)
            co_await both_over.async_wait(tuple_awaitable);
        co_await lock{second_client, p + "leader"}.async_destroy(tuple_awaitable);
        co_await s2.async_destroy(tuple_awaitable);
    };
    run(ioc, body(), 90s);
}

TEST_CASE_METHOD(cluster_fixture,
                 "cluster: the permit holder's server dies: the holder learns its loss before "
                 "the waiter gets the slot",
                 "[failover][cluster]") {
    if (skip())
        return;
    const auto leader = cluster->leader();
    REQUIRE(leader);
    const std::size_t holder_at = (*leader + 1) % 3;
    client holder_client = client_of(holder_at);
    client waiter_client = client_of(*leader);
    auto body = [&]() -> asio::awaitable<void> {
        // Delete behaviour, as semaphore sessions have (conclave lock -n): a dead holder's
        // contender key goes with its session.
        auto a = co_await running_session(holder_client, 5s, session_behavior::delete_keys);
        auto b = co_await running_session(waiter_client, 5s, session_behavior::delete_keys);
        semaphore held{holder_client, p + "jobs", 1};
        semaphore wanted{waiter_client, p + "jobs", 1};
        auto permit_a = co_await held.async_acquire(a);

        std::optional<steady::time_point> holder_lost, waiter_granted;
        permit permit_b;
        asio::steady_timer granted{ioc, 1h};
        auto wait = [&]() -> asio::awaitable<void> {
            permit_b = co_await wanted.async_acquire(b, asio::use_awaitable);
            waiter_granted = steady::now();
            granted.cancel();
        };
        auto watch_loss = [&]() -> asio::awaitable<void> {
            auto [ec] = co_await permit_a.async_wait_lost(tuple_awaitable);
            if (ec != asio::error::operation_aborted)
                holder_lost = steady::now();
        };
        asio::co_spawn(ioc, wait(), asio::detached);
        asio::co_spawn(ioc, watch_loss(), asio::detached);

        const auto killed_at = steady::now();
        cluster->kill(holder_at);
        if (!waiter_granted)
            co_await granted.async_wait(tuple_awaitable);
        REQUIRE(waiter_granted);
        REQUIRE(holder_lost);
        CHECK(*holder_lost <= *waiter_granted);
        CHECK_FALSE(permit_a.held());
        std::printf("failover: permit holder's server killed: it knew at %.2f s, the waiter "
                    "was granted at %.2f s\n",
                    seconds_between(killed_at, *holder_lost),
                    seconds_between(killed_at, *waiter_granted));
        co_await permit_b.async_release();
        co_await wanted.async_destroy();
        co_await b.async_destroy();
        const auto [sessions, keys] = co_await leftovers(waiter_client, 10s);
        CHECK(sessions == 0);
        CHECK(keys == 0);
    };
    run(ioc, body(), 90s);
}

TEST_CASE_METHOD(cluster_fixture,
                 "cluster: the leader server dies while a permit is held: the holder keeps it "
                 "or learns its loss first, the waiter gets the slot after the release",
                 "[failover][cluster]") {
    if (skip())
        return;
    const auto leader = cluster->leader();
    REQUIRE(leader);
    const std::size_t holder_at = (*leader + 1) % 3, waiter_at = (*leader + 2) % 3;
    client holder_client = client_of(holder_at);
    // The waiter reaches its server through a proxy, which tells when the answer to its
    // contender key's write is in: from then on it waits for the slot. (An acquire whose
    // contender write fails ends with that error, so that write must not meet the election.)
    fault_proxy waiter_proxy{ioc.get_executor(), "127.0.0.1", cluster->http_port(waiter_at)};
    waiter_proxy.start();
    client waiter_client = client_through(waiter_proxy);
    auto body = [&]() -> asio::awaitable<void> {
        // (A TTL the election fits in: the holder's renewals wait for the new leader.)
        auto a = co_await running_session(holder_client, 10s, session_behavior::delete_keys);
        auto b = co_await running_session(waiter_client, 10s, session_behavior::delete_keys);
        semaphore held{holder_client, p + "jobs", 1};
        semaphore wanted{waiter_client, p + "jobs", 1};
        auto permit_a = co_await held.async_acquire(a);
        const auto token_a = permit_a.token();

        std::optional<steady::time_point> holder_lost, waiter_done;
        error_code loss, waiter_error;
        bool watching = true;
        permit permit_b;
        change_event changed{ioc.get_executor()};
        auto wait = [&]() -> asio::awaitable<void> {
            auto [ec, got] = co_await wanted.async_acquire(b, tuple_awaitable);
            waiter_error = ec;
            permit_b = std::move(got);
            waiter_done = steady::now();
            changed.notify();
        };
        auto watch_loss = [&]() -> asio::awaitable<void> {
            auto [ec] = co_await permit_a.async_wait_lost(tuple_awaitable);
            if (ec != asio::error::operation_aborted && !holder_lost) {
                loss = ec;
                holder_lost = steady::now();
            }
            watching = false;
            changed.notify();
        };
        waiter_proxy.hold_responses("/v1/kv/" + p + "jobs/" + b.id());
        asio::co_spawn(ioc, wait(), asio::detached);
        asio::co_spawn(ioc, watch_loss(), asio::detached);
        co_await waiter_proxy.async_wait_held(); // the contender key is written
        waiter_proxy.release_held();

        const auto killed_at = steady::now();
        cluster->kill(*leader);
        // Writes resume through the waiter's server once a new leader is elected.
        const auto resumed = co_await first_write(waiter_client, p + "probe");
        std::printf("failover (TTL 10 s): the leader killed (semaphore): writes resume after "
                    "%.2f s\n",
                    seconds_between(killed_at, resumed));
        // The holder's server lives: it keeps its permit through the election, or its lost
        // signal fired before the waiter was granted.
        if (!holder_lost) {
            CHECK(permit_a.held());
            CHECK_FALSE(waiter_done);
            std::printf("failover: the permit holder kept its permit through the election\n");
        } else {
            INFO(loss.message());
            CHECK_FALSE(permit_a.held());
            if (waiter_done)
                CHECK(*holder_lost <= *waiter_done);
            std::printf("failover: the permit holder knew it lost at %.2f s (%s)\n",
                        seconds_between(killed_at, *holder_lost), loss.message().c_str());
        }
        const auto released_at = steady::now();
        co_await permit_a.async_release();
        while (!waiter_done)
            co_await changed.wait();
        {
            INFO(waiter_error.message());
            REQUIRE_FALSE(waiter_error);
        }
        REQUIRE(permit_b.held());
        CHECK(permit_b.token().modify_index > token_a.modify_index);
        std::printf("failover: the waiter was granted %.2f s after the release (%.2f s after "
                    "the kill)\n",
                    seconds_between(released_at, *waiter_done),
                    seconds_between(killed_at, *waiter_done));
        while (watching) // (the release ends the lost signal's wait)
            co_await changed.wait();
        co_await permit_b.async_release();
        co_await wanted.async_destroy();
        co_await b.async_destroy();
        co_await a.async_destroy();
        co_await waiter_client.async_kv_delete(p + "probe");
        const auto [sessions, keys] = co_await leftovers(waiter_client, 20s);
        CHECK(sessions == 0); // (the dead leader's own sessions: none were made there)
        CHECK(keys == 0);
    };
    run(ioc, body(), 90s);
}

TEST_CASE_METHOD(cluster_fixture,
                 "cluster: the leader server dies while a candidate leads: its term goes on or "
                 "ends before another begins, then exactly one leader",
                 "[failover][cluster]") {
    if (skip())
        return;
    const auto raft_leader = cluster->leader();
    REQUIRE(raft_leader);
    const std::size_t first_at = (*raft_leader + 1) % 3, second_at = (*raft_leader + 2) % 3;
    client first_client = client_of(first_at);
    // The other candidate reaches its server through a proxy, which tells when its campaign
    // has read the key (and found it held): it campaigns when the leader dies.
    fault_proxy second_proxy{ioc.get_executor(), "127.0.0.1", cluster->http_port(second_at)};
    second_proxy.start();
    client second_client = client_through(second_proxy);
    auto body = [&]() -> asio::awaitable<void> {
        // (A TTL the election fits in, as for the lock.)
        auto s1 = co_await running_session(first_client, 10s);
        auto s2 = co_await running_session(second_client, 10s);
        elector first{first_client, p + "leader"};
        elector second{second_client, p + "leader"};

        // Every term either candidate began, in order; `leading` counts the running ones.
        struct term {
            int who;
            steady::time_point began;
            std::optional<steady::time_point> ended;
        };
        std::vector<term> terms;
        int leading = 0, most_leading = 0;
        change_event changed{ioc.get_executor()};
        const auto task_of = [&](int who) -> leader_task {
            return [&, who](leadership) -> asio::awaitable<void> {
                const std::size_t mine = terms.size();
                terms.push_back(term{who, steady::now(), std::nullopt});
                most_leading = std::max(most_leading, ++leading);
                changed.notify();
                asio::steady_timer forever{ioc, 1h};
                co_await forever.async_wait(tuple_awaitable); // until cancelled: term over
                terms[mine].ended = steady::now();
                --leading;
                changed.notify();
            };
        };
        const auto leader_now = [&]() -> std::optional<int> {
            if (leading == 1 && !terms.back().ended)
                return terms.back().who;
            return std::nullopt;
        };
        asio::cancellation_signal stop_first, stop_second;
        bool first_over = false, second_over = false;
        asio::co_spawn(
            ioc, first.async_run(s1, task_of(1), tuple_awaitable),
            asio::bind_cancellation_slot(stop_first.slot(), [&](std::exception_ptr, auto) {
                first_over = true;
                changed.notify();
            }));
        while (terms.empty())
            co_await changed.wait();
        second_proxy.hold_responses("/v1/kv/" + p + "leader");
        asio::co_spawn(
            ioc, second.async_run(s2, task_of(2), tuple_awaitable),
            asio::bind_cancellation_slot(stop_second.slot(), [&](std::exception_ptr, auto) {
                second_over = true;
                changed.notify();
            }));
        co_await second_proxy.async_wait_held();
        second_proxy.release_held();

        const auto killed_at = steady::now();
        cluster->kill(*raft_leader);
        const auto resumed = co_await first_write(second_client, p + "probe");
        std::printf("failover (TTL 10 s): the leader killed (elector): writes resume after "
                    "%.2f s\n",
                    seconds_between(killed_at, resumed));
        if (terms.size() == 1 && !terms[0].ended) {
            // The usual case: the leading candidate kept its term through the election.
            CHECK(first.is_leader());
            CHECK_FALSE(second.is_leader());
            std::printf("failover: the leading candidate kept its term through the election\n");
        } else {
            REQUIRE(terms[0].ended); // (not ended: a second term began during the first)
            std::printf("failover: the leading candidate's term ended at %.2f s (%zu terms "
                        "so far)\n",
                        seconds_between(killed_at, *terms[0].ended), terms.size());
        }
        // Re-elected (at once when the term went on): exactly one leader, whom Consul names.
        while (!leader_now() && !(first_over && second_over))
            co_await changed.wait();
        REQUIRE(leader_now()); // (not both campaigns over)
        const int elected = *leader_now();
        CHECK((elected == 1 ? first : second).is_leader());
        CHECK_FALSE((elected == 1 ? second : first).is_leader());
        auto named = co_await second.async_leader();
        REQUIRE(named);
        CHECK(named->session == (elected == 1 ? s1 : s2).id());

        // The first candidate steps down (or just stops campaigning): the other leads next.
        const auto stepped_down_at = steady::now();
        stop_first.emit(asio::cancellation_type::terminal);
        while (leader_now() != 2 && !second_over)
            co_await changed.wait();
        REQUIRE(leader_now() == 2); // (not its campaign over)
        if (elected == 1)
            std::printf("failover: the next term began %.2f s after the leader stepped down\n",
                        seconds_between(stepped_down_at, terms.back().began));
        while (!first_over)
            co_await changed.wait();
        CHECK(second.is_leader());
        CHECK_FALSE(first.is_leader());
        named = co_await first.async_leader();
        REQUIRE(named);
        CHECK(named->session == s2.id());

        // Never two terms at once: each began after the one before had ended.
        CHECK(most_leading == 1);
        for (std::size_t i = 1; i < terms.size(); ++i) {
            REQUIRE(terms[i - 1].ended);
            CHECK(*terms[i - 1].ended <= terms[i].began);
        }

        stop_second.emit(asio::cancellation_type::terminal);
        while (!second_over)
            co_await changed.wait();
        CHECK(leading == 0);
        co_await lock{second_client, p + "leader"}.async_destroy();
        co_await s1.async_destroy();
        co_await s2.async_destroy();
        co_await second_client.async_kv_delete(p + "probe");
        const auto [sessions, keys] = co_await leftovers(second_client, 20s);
        CHECK(sessions == 0);
        CHECK(keys == 0);
    };
    run(ioc, body(), 90s);
}
