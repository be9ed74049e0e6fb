// SPDX-License-Identifier: BSL-1.0
// conclave::group: joining (the member key as Go tools see it), members, updates in place,
// leaving, the ids and keys a join refuses, watches that see joins, updates and leaves
// (also of a member whose session ended with behavior release), the lost signal, one
// blocking query for every watch of a client (proven by counting its requests), and
// cancellation.
#include "recipes_fixture.hpp"

#include <conclave/group.hpp>
#include <conclave/lock.hpp>
#include <conclave/observer.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

// The blocking reads of a prefix (kv_list) a client sent, and those in flight now.
struct list_counter : observer {
    std::size_t blocking_lists = 0;
    std::size_t blocking_in_flight = 0;

    void request_started(std::string_view endpoint, bool blocking) override {
        if (endpoint == "kv_list" && blocking) {
            ++blocking_lists;
            ++blocking_in_flight;
        }
    }
    void request_finished(const request_event& e) override {
        if (e.endpoint == "kv_list" && e.blocking)
            --blocking_in_flight;
    }
};

// Calls `on_start` with the endpoint of each request a client starts.
struct request_hook : observer {
    std::function<void(std::string_view)> on_start;
    void request_started(std::string_view endpoint, bool) override {
        if (on_start)
            on_start(endpoint);
    }
};

// The grants and sessions a client's observer saw lost: (kind, name).
struct loss_log : observer {
    std::vector<std::pair<hold_kind, std::string>> lost;
    void health_changed(const health_event& e) override {
        if (e.health == hold_health::lost)
            lost.emplace_back(e.kind, std::string(e.name));
    }
};

// The code and message of a failure awaited with conclave::as_outcome (empty: success).
std::pair<error_code, std::string> failure_of(const std::exception_ptr& e) {
    if (!e)
        return {};
    try {
        std::rethrow_exception(e);
    } catch (const conclave::error& x) {
        return {x.code(), x.what()};
    }
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

using kind = member_change::kind;

// The changes of a view as (kind, id) pairs.
std::vector<std::pair<kind, std::string>> changes_of(const group_view& v) {
    std::vector<std::pair<kind, std::string>> out;
    for (const auto& c : v.changes)
        out.emplace_back(c.what, c.member.id);
    return out;
}

// Waits (blocking queries, no polling sleeps) until `key` does not exist.
asio::awaitable<bool> key_gone(client& c, const std::string& key) {
    std::uint64_t index = 0;
    const auto end = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < end) {
        auto r = co_await c.async_kv_get(key, query_options::blocking(index, 1s));
        if (!r.entry)
            co_return true;
        index = r.meta.index;
    }
    co_return false;
}

} // namespace

TEST_CASE_METHOD(recipes_fixture, "join, members, update in place, leave", "[group]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        group workers{consul, p + "workers/"};
        CHECK(workers.prefix() == p + "workers");
        auto me = co_await workers.async_join(s, "w1", "10.0.0.1:9000");
        CHECK(me.id() == "w1");
        const auto t = me.token();
        CHECK(t.key == p + "workers/w1");
        CHECK(t.session == s.id());
        CHECK(t.lock_index == 1);
        CHECK(me.held() == t);

        auto raw = co_await consul.async_kv_get(p + "workers/w1");
        REQUIRE(raw.entry);
        CHECK(raw.entry->flags == group_member_flag_value);
        CHECK(raw.entry->session == s.id());
        CHECK(raw.entry->value == "10.0.0.1:9000");

        auto members = co_await workers.async_members();
        REQUIRE(members.size() == 1);
        CHECK(members[0].id == "w1");
        CHECK(members[0].value == "10.0.0.1:9000");
        CHECK(members[0].session == s.id());

        // In place: same session, same LockIndex, the token unchanged.
        co_await me.async_update("10.0.0.1:9001");
        auto updated = co_await consul.async_kv_get(p + "workers/w1");
        REQUIRE(updated.entry);
        CHECK(updated.entry->value == "10.0.0.1:9001");
        CHECK(updated.entry->lock_index == t.lock_index);
        CHECK(updated.entry->session == s.id());
        CHECK(updated.entry->flags == group_member_flag_value);
        CHECK(me.token() == t);
        CHECK(me.held() == t);

        co_await me.async_leave();
        CHECK_FALSE(me.held());
        auto gone = co_await consul.async_kv_get(p + "workers/w1");
        CHECK_FALSE(gone.entry);
        auto none = co_await workers.async_members();
        CHECK(none.empty());
        co_await me.async_leave(); // retry-safe
        auto [ec] = co_await me.async_update("late", asio::as_tuple(asio::deferred));
        CHECK(ec == errc::lock_lost);
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a watcher sees joins, updates and leaves", "[group][watch]") {
    client watcher_client{ioc.get_executor(), server.client_config()};
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        group g{consul, p + "g"};
        group seen{watcher_client, p + "g"};
        auto changes = seen.watch();

        auto first = co_await changes.async_next(); // the current state, at once
        CHECK(first.members.empty());
        CHECK(first.changes.empty());

        auto ma = co_await g.async_join(a, "a", "1");
        auto joined = co_await changes.async_next();
        REQUIRE(joined.members.size() == 1);
        CHECK(changes_of(joined) == std::vector<std::pair<kind, std::string>>{{kind::joined, "a"}});
        CHECK(joined.changes[0].member.value == "1");
        CHECK(joined.changes[0].member.session == a.id());

        auto mb = co_await g.async_join(b, "b", "2");
        co_await ma.async_update("1bis");
        // Both changes, whether they came in one read or two.
        std::vector<std::pair<kind, std::string>> got;
        while (got.size() < 2) {
            auto v = co_await changes.async_next();
            const auto c = changes_of(v);
            got.insert(got.end(), c.begin(), c.end());
        }
        std::sort(got.begin(), got.end());
        CHECK(got ==
              std::vector<std::pair<kind, std::string>>{{kind::joined, "b"}, {kind::updated, "a"}});

        co_await ma.async_leave();
        auto left = co_await changes.async_next();
        CHECK(changes_of(left) == std::vector<std::pair<kind, std::string>>{{kind::left, "a"}});
        CHECK(left.changes[0].member.value == "1bis"); // as last reported
        REQUIRE(left.members.size() == 1);
        CHECK(left.members[0].id == "b");

        co_await mb.async_leave();
        auto empty = co_await changes.async_next();
        CHECK(empty.members.empty());
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a member whose session is destroyed leaves even with behavior release",
                 "[group][watch]") {
    client watcher_client{ioc.get_executor(), server.client_config()};
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul,
                                                quick().with_behavior(session_behavior::release));
        group g{consul, p + "g"};
        group seen{watcher_client, p + "g"};
        auto changes = seen.watch();
        auto me = co_await g.async_join(s, "doomed", "v");
        auto joined = co_await changes.async_next();
        REQUIRE(joined.members.size() == 1);

        // An operator (another client) destroys the session: Consul releases the key,
        // which keeps its flags and value but no session. No member any more.
        co_await watcher_client.async_session_destroy(s.id());
        auto left = co_await changes.async_next();
        CHECK(left.members.empty());
        CHECK(changes_of(left) ==
              std::vector<std::pair<kind, std::string>>{{kind::left, "doomed"}});
        auto [lost] = co_await me.async_wait_lost(asio::as_tuple(asio::deferred));
        CHECK((lost == errc::lock_lost || lost == errc::session_invalidated ||
               lost == errc::session_expired));
        CHECK_FALSE(me.held());
        // The released key is deleted by the group's reader, so groups do not collect them.
        const bool gone = co_await key_gone(consul, p + "g/doomed");
        CHECK(gone);
        auto members = co_await g.async_members();
        CHECK(members.empty());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a membership is lost when its key is deleted, and says so",
                 "[group]") {
    auto log = std::make_shared<loss_log>();
    auto cfg = server.client_config();
    cfg.observer = log;
    client member_client{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(member_client, quick());
        group g{member_client, p + "g"};
        auto me = co_await g.async_join(s, "m", "v");
        auto remove = [&]() -> asio::awaitable<void> {
            co_await consul.async_kv_delete(p + "g/m");
        };
        auto wait = [&]() -> asio::awaitable<error_code> {
            auto [ec] = co_await me.async_wait_lost(asio::as_tuple(asio::use_awaitable));
            co_return ec;
        };
        const auto ec = co_await (wait() && remove());
        CHECK(ec == errc::lock_lost);
        CHECK_FALSE(me.held());
        // Reported to the observer (metrics: lost_total{kind="group_member"}).
        CHECK(log->lost ==
              std::vector<std::pair<hold_kind, std::string>>{{hold_kind::group_member, p + "g/m"}});
        co_await me.async_leave(); // nothing left to do: success
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a join cancelled as its write is on its way leaves no member",
                 "[group]") {
    auto hook = std::make_shared<request_hook>();
    auto cfg = server.client_config();
    cfg.observer = hook;
    client c{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(c, quick());
        group g{c, p + "g"};
        asio::cancellation_signal stop;
        hook->on_start = [&](std::string_view endpoint) {
            if (endpoint == "txn")
                asio::post(ioc, [&] { stop.emit(asio::cancellation_type::terminal); });
        };
        auto [ec, m] = co_await g.async_join(
            s, "m", "v", asio::bind_cancellation_slot(stop.slot(), awaitable_tuple));
        hook->on_start = nullptr;
        CHECK(ec == asio::error::operation_aborted);
        CHECK_FALSE(m.valid());
        // Applied or not, the key does not stay while the session lives.
        const bool gone = co_await key_gone(c, p + "g/m");
        CHECK(gone);
        auto members = co_await g.async_members();
        CHECK(members.empty());
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a join refuses bad ids, other recipes' keys and live members",
                 "[group]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        group g{consul, p + "g"};
        for (const std::string id : {"", "a/b"}) {
            auto [e, m] = co_await g.async_join(a, id, "v", as_outcome);
            CHECK(failure_of(e).first == errc::invalid_argument);
            CHECK_FALSE(m.valid());
        }

        // A lock's key, a plain key: another's, never overwritten.
        lock other{consul, p + "g/locked"};
        auto lease = co_await other.async_acquire(a);
        auto [e1, m1] = co_await g.async_join(b, "locked", "v", as_outcome);
        const auto [c1, what1] = failure_of(e1);
        CHECK(c1 == errc::conflict);
        CHECK(contains(what1, "key " + p + "g/locked is a lock's key"));
        co_await lease.async_release();
        co_await other.async_destroy();
        co_await consul.async_kv_put(p + "g/plain", "data");
        auto [e2, m2] = co_await g.async_join(b, "plain", "v", as_outcome);
        const auto [c2, what2] = failure_of(e2);
        CHECK(c2 == errc::conflict);
        CHECK(contains(what2, "holds a plain value"));
        auto plain = co_await consul.async_kv_get(p + "g/plain");
        REQUIRE(plain.entry);
        CHECK(plain.entry->value == "data");
        co_await consul.async_kv_delete(p + "g/plain");

        // An id another live session holds.
        auto ma = co_await g.async_join(a, "x", "from a");
        auto [e3, m3] = co_await g.async_join(b, "x", "from b", as_outcome);
        const auto [c3, what3] = failure_of(e3);
        CHECK(c3 == errc::conflict);
        CHECK(contains(what3, "held by session " + a.id()));
        CHECK(ma.held());
        // The same session again (a retried join): the key is taken over, same term.
        auto again = co_await g.async_join(a, "x", "from a again");
        CHECK(again.token().lock_index == ma.token().lock_index);
        auto members = co_await g.async_members();
        REQUIRE(members.size() == 1);
        CHECK(members[0].value == "from a again");
        co_await again.async_leave();
        co_await ma.async_leave(); // its key is gone: nothing to do
        CHECK_FALSE(ma.held());
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "watches of one client on one group share one blocking query",
                 "[group][watch]") {
    auto log = std::make_shared<list_counter>();
    auto cfg = server.client_config();
    cfg.observer = log;
    client watcher_client{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t objects = 3, watches_each = 3;
        std::vector<std::unique_ptr<group>> groups;
        std::vector<group_watch> watches;
        for (std::size_t i = 0; i < objects; ++i) {
            groups.push_back(std::make_unique<group>(watcher_client, p + "shared"));
            for (std::size_t j = 0; j < watches_each; ++j)
                watches.push_back(groups.back()->watch());
        }
        for (auto& w : watches) {
            auto first = co_await w.async_next();
            CHECK(first.members.empty());
        }
        std::size_t saw_join = 0;
        countdown done{ioc.get_executor(), watches.size()};
        auto waiter = [&](group_watch& w) -> asio::awaitable<void> {
            auto v = co_await w.async_next();
            if (v.members.size() == 1 && v.members[0].id == "m")
                ++saw_join;
            done.count_down();
        };
        for (auto& w : watches)
            asio::co_spawn(ioc, waiter(w), asio::detached);
        const bool parked = co_await eventually(ioc, [&] { return log->blocking_in_flight >= 1; });
        CHECK(parked);
        CHECK(log->blocking_in_flight == 1); // one query for 9 watches on 3 objects

        auto s = co_await session::async_create(consul, quick());
        group g{consul, p + "shared"};
        auto m = co_await g.async_join(s, "m", "v");
        co_await done.wait();
        CHECK(saw_join == watches.size());
        CHECK(log->blocking_in_flight <= 1);
        co_await m.async_leave();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a cancelled watch completes with operation_aborted",
                 "[group][watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        group g{consul, p + "quiet"};
        auto changes = g.watch();
        auto first = co_await changes.async_next();
        CHECK(first.members.empty());
        for (auto type : {asio::cancellation_type::terminal, asio::cancellation_type::total}) {
            cancel_after stop{ioc.get_executor(), 50ms, type};
            auto [ec, v] = co_await changes.async_next(stop.bind(awaitable_tuple));
            CHECK(ec == asio::error::operation_aborted);
            CHECK(v.members.empty());
        }
        // Still usable: the next call reports what changed meanwhile.
        auto s = co_await session::async_create(consul, quick());
        auto m = co_await g.async_join(s, "late", "v");
        auto after = co_await changes.async_next();
        CHECK(changes_of(after) ==
              std::vector<std::pair<kind, std::string>>{{kind::joined, "late"}});
        co_await m.async_leave();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a group needs a prefix", "[group]") {
    auto make = [&] { group g{consul, "/"}; };
    CHECK_THROWS_AS(make(), boost::system::system_error);
}
