// SPDX-License-Identifier: BSL-1.0
// conclave::elector's hand-over: a leader hands the lead to a preferred candidate, when its
// lock sees that candidate waiting.
#include "elector_candidate.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using steady = std::chrono::steady_clock;

// A preferred candidate that starts campaigning gets the lead from the current leader, whose
// term ends without a resign; an older contender in line is passed over. On one client
// (the release hands the key to a local waiter) and on separate clients (to a contender in
// another process, through its contender key).
TEST_CASE_METHOD(recipes_fixture, "the leader hands over to the preferred candidate",
                 "[elector][preferred]") {
    const bool separate = GENERATE(false, true);
    auto body = [&]() -> asio::awaitable<void> {
        client second{ioc.get_executor(), server.client_config()};
        client third{ioc.get_executor(), server.client_config()};
        auto opts = [](std::string v) {
            return elector_options{}.with_value(std::move(v)).with_preferred("b");
        };
        candidate a{*this, consul, opts("a")};
        co_await a.start(a.lead_forever());
        co_await a.wait_until([&] { return a.terms == 1; });
        // A contender that is not preferred waits its turn: a keeps leading.
        candidate c{*this, separate ? third : consul, opts("c")};
        co_await c.start(c.lead_forever());
        auto still = co_await (a.wait_until([&] { return a.tasks_returned > 0; }) || sleep(300ms));
        CHECK(still.index() == 1);
        // The preferred one arrives: a's term ends, and b leads (not c, older in line).
        candidate b{*this, separate ? second : consul, opts("b")};
        co_await b.start(b.lead_forever());
        co_await b.wait_until([&] { return b.terms == 1; });
        CHECK(a.tasks_returned == 1);
        CHECK(c.terms == 0);
        CHECK(b.tokens.front().lock_index == a.tokens.front().lock_index + 1);
        auto leader = co_await b.el.async_leader();
        REQUIRE(leader);
        CHECK(leader->value == "b");
        // The preferred leader keeps the lead while the others wait.
        auto kept = co_await (b.wait_until([&] { return b.tasks_returned > 0; }) || sleep(300ms));
        CHECK(kept.index() == 1);
        co_await b.finish();
        co_await c.finish();
        co_await a.finish();
        lock cleanup{consul, p + "leader"};
        co_await cleanup.async_destroy();
        co_await consul.async_kv_delete(p + "leader/", kv_delete_options{}.with_recurse());
    };
    run(ioc, body());
}

// The leader decides to hand over from the same view of the key as the release that hands
// the key: its lock's own reads of the key and contender keys. Here those reads reach the
// leader late (a proxy holds them back): had the leader seen the preferred candidate some
// other way first, its release would have handed the key to the older contender (c).
TEST_CASE_METHOD(recipes_fixture,
                 "the leader hands over to the preferred candidate only once its lock sees it "
                 "waiting",
                 "[elector][preferred]") {
    const auto cfg = server.client_config();
    fault_proxy proxy{ioc.get_executor(), cfg.host, cfg.port};
    proxy.start();
    auto via_proxy = cfg;
    via_proxy.port = proxy.port();
    client leader_client{ioc.get_executor(), via_proxy};
    client second{ioc.get_executor(), cfg};
    client third{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        auto opts = [](std::string v) {
            return elector_options{}.with_value(std::move(v)).with_preferred("b");
        };
        candidate a{*this, leader_client, opts("a")};
        co_await a.start(a.lead_forever());
        co_await a.wait_until([&] { return a.terms == 1; });
        candidate c{*this, third, opts("c")};
        co_await c.start(c.lead_forever());
        // The leader's reads of the key (not of its contender keys) are held from here on.
        proxy.hold_responses("/v1/kv/" + p + "leader", fault_proxy::path_match::exact);
        candidate b{*this, second, opts("b")};
        co_await b.start(b.lead_forever());
        co_await proxy.async_wait_held();
        // While the leader's view lacks b, its term goes on.
        auto early = co_await (a.wait_until([&] { return a.tasks_returned > 0; }) || sleep(300ms));
        CHECK(early.index() == 1);
        proxy.release_held();
        co_await b.wait_until([&] { return b.terms == 1; });
        CHECK(a.tasks_returned == 1);
        CHECK(c.terms == 0);
        co_await b.finish();
        co_await c.finish();
        co_await a.finish();
        lock cleanup{consul, p + "leader"};
        co_await cleanup.async_destroy();
        co_await consul.async_kv_delete(p + "leader/", kv_delete_options{}.with_recurse());
    };
    run(ioc, body());
}
