// SPDX-License-Identifier: BSL-1.0
// elector::async_proclaim (a new value in the same term: session, LockIndex and token kept,
// observers see it, no term change) and elector::async_participants (the leader, then in
// fair mode the candidates of every process in line).
#include "elector_candidate.hpp"

#include <conclave/observer.hpp>
#include <conclave/watch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

// Terms of async_run as the client's observer saw them begin and end.
struct term_log : observer {
    int began = 0;
    int ended = 0;
    void leadership_changed(const leadership_event& e) override { ++(e.leading ? began : ended); }
};

// Waits (a blocking watch, no polling) until `n` candidates wait in the fair-mode line of
// `key`.
asio::awaitable<void> until_waiting(client& c, const std::string& key, std::size_t n) {
    watch line{c, watch::prefix(key + "/.queue/")};
    for (;;) {
        auto snap = co_await line.async_next();
        std::size_t live = 0;
        for (const auto& e : snap.entries)
            live += e.session.empty() ? 0 : 1;
        if (live == n)
            co_return;
    }
}

} // namespace

TEST_CASE_METHOD(recipes_fixture, "a leader proclaims a new value in the same term",
                 "[elector][proclaim]") {
    client other{ioc.get_executor(), server.client_config()};
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        elector el{consul, p + "leader", elector_options{}.with_value("10.0.0.1:80")};
        elector seen{other, p + "leader"};
        auto observer = seen.observe();

        auto l = co_await el.async_campaign(s);
        const auto token = l.token();
        auto first = co_await observer.async_next();
        REQUIRE(first);
        CHECK(first->value == "10.0.0.1:80");

        co_await el.async_proclaim("10.0.0.1:81");
        auto now = co_await observer.async_next();
        REQUIRE(now);
        CHECK(now->value == "10.0.0.1:81");
        CHECK(now->session == first->session);
        CHECK(now->lock_index == first->lock_index); // the same term
        CHECK(l.token() == token);
        CHECK(el.is_leader() == token);
        auto raw = co_await consul.async_kv_get(p + "leader");
        REQUIRE(raw.entry);
        CHECK(raw.entry->lock_index == token.lock_index);
        CHECK(raw.entry->session == s.id());
        CHECK(raw.entry->flags == lock_flag_value);
        auto leader = co_await seen.async_leader();
        REQUIRE(leader);
        CHECK(leader->value == "10.0.0.1:81");

        co_await l.async_release();
        auto [ec] = co_await el.async_proclaim("late", asio::as_tuple(asio::deferred));
        CHECK(ec == errc::invalid_argument); // no term any more
        co_await s.async_destroy();
        co_await consul.async_kv_delete(p + "leader");
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a proclaim from the leader task is no new term",
                 "[elector][proclaim]") {
    auto log = std::make_shared<term_log>();
    auto cfg = server.client_config();
    cfg.observer = log;
    client logged{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        candidate c{*this, logged, elector_options{}.with_value("v1")};
        auto observer = c.el.observe();
        bool proclaimed = false;
        co_await c.start([&](leadership) -> asio::awaitable<void> {
            ++c.terms;
            co_await c.el.async_proclaim("v2");
            proclaimed = true;
            c.changed.notify();
            asio::steady_timer forever{ioc, std::chrono::steady_clock::time_point::max()};
            co_await forever.async_wait(asio::use_awaitable);
        });
        co_await c.wait_until([&] { return proclaimed || c.ended.has_value(); });
        REQUIRE(proclaimed);
        std::optional<leader_info> now;
        do
            now = co_await observer.async_next();
        while (!now || now->value != "v2");
        CHECK(now->lock_index == c.el.is_leader()->lock_index);
        CHECK(c.terms == 1);
        CHECK(log->began == 1);
        CHECK(log->ended == 0);
        co_await c.finish();
        CHECK(log->ended == 1);
        co_await consul.async_kv_delete(p + "leader");
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a proclaim after the key was taken away is lock_lost",
                 "[elector][proclaim]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        elector el{consul, p + "leader", elector_options{}.with_value("v1")};
        auto [none] = co_await el.async_proclaim("v0", asio::as_tuple(asio::deferred));
        CHECK(none == errc::invalid_argument); // never led
        auto l = co_await el.async_campaign(s);
        co_await consul.async_kv_delete(p + "leader");
        auto [ec] = co_await el.async_proclaim("v2", asio::as_tuple(asio::deferred));
        CHECK(ec == errc::lock_lost);
        CHECK_FALSE(l.held());
        auto gone = co_await consul.async_kv_get(p + "leader");
        CHECK_FALSE(gone.entry); // nothing written
        co_await l.async_release();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "participants in fair mode: the leader, then the line",
                 "[elector][participants]") {
    client second{ioc.get_executor(), server.client_config()};
    client third{ioc.get_executor(), server.client_config()};
    auto body = [&]() -> asio::awaitable<void> {
        const auto key = p + "leader";
        auto sa = co_await session::async_create(consul, quick());
        auto sb = co_await session::async_create(second, quick());
        auto sc = co_await session::async_create(third, quick());
        elector a{consul, key, elector_options{}.with_value("a").with_fair()};
        elector b{second, key, elector_options{}.with_value("b").with_fair()};
        elector c{third, key, elector_options{}.with_value("c").with_fair()};
        auto none = co_await a.async_participants();
        CHECK(none.empty());

        auto la = co_await a.async_campaign(sa);
        std::optional<leadership> lb, lc;
        auto campaign = [](elector& e, session& s,
                           std::optional<leadership>& out) -> asio::awaitable<void> {
            out = co_await e.async_campaign(s);
        };
        asio::co_spawn(ioc, campaign(b, sb, lb), asio::detached);
        co_await until_waiting(consul, key, 1);
        asio::co_spawn(ioc, campaign(c, sc, lc), asio::detached);
        co_await until_waiting(consul, key, 2);

        auto line = co_await b.async_participants();
        CHECK(line == std::vector<participant>{
                          {"a", sa.id(), true}, {"b", sb.id(), false}, {"c", sc.id(), false}});

        co_await la.async_release();
        co_await until_waiting(consul, key, 1); // b took the lead, c waits
        auto next = co_await a.async_participants();
        CHECK(next == std::vector<participant>{{"b", sb.id(), true}, {"c", sc.id(), false}});

        const bool b_leads = co_await eventually(ioc, [&] { return lb.has_value(); });
        REQUIRE(b_leads);
        co_await lb->async_release();
        const bool c_leads = co_await eventually(ioc, [&] { return lc.has_value(); });
        REQUIRE(c_leads);
        co_await lc->async_release();
        co_await sa.async_destroy();
        co_await sb.async_destroy();
        co_await sc.async_destroy();
        co_await consul.async_kv_delete(key, kv_delete_options{}.with_recurse());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "participants in plain mode: the leader only",
                 "[elector][participants]") {
    client second{ioc.get_executor(), server.client_config()};
    auto body = [&]() -> asio::awaitable<void> {
        const auto key = p + "leader";
        auto sa = co_await session::async_create(consul, quick());
        auto sb = co_await session::async_create(second, quick());
        elector a{consul, key, elector_options{}.with_value("a")};
        elector b{second, key, elector_options{}.with_value("b")};
        auto la = co_await a.async_campaign(sa);
        asio::cancellation_signal stop;
        std::optional<error_code> b_ended;
        b.async_campaign(sb, asio::bind_cancellation_slot(
                                 stop.slot(), [&](error_code ec, leadership) { b_ended = ec; }));
        auto line = co_await b.async_participants();
        CHECK(line == std::vector<participant>{{"a", sa.id(), true}});
        stop.emit(asio::cancellation_type::terminal);
        const bool ended = co_await eventually(ioc, [&] { return b_ended.has_value(); });
        CHECK(ended);
        CHECK(b_ended == asio::error::operation_aborted);
        co_await la.async_release();
        co_await sa.async_destroy();
        co_await sb.async_destroy();
        co_await consul.async_kv_delete(key);
    };
    run(ioc, body());
}
