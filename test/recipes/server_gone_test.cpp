// SPDX-License-Identifier: BSL-1.0
// The server goes away for good (its host died, nothing answers on its port): a leading
// service's session run, its campaign and a leader observer must all end (the session
// with its loss, by its local deadline), raced as the docs show: nothing waits for ever.
#include "support/backend.hpp"
#include "support/catch.hpp"
#include "support/run.hpp"

#include <conclave/client.hpp>
#include <conclave/elector.hpp>
#include <conclave/session.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
namespace asio = boost::asio;

TEST_CASE("when the server is gone, a leader's session run, campaign and observer end",
          "[elector][gone]") {
    asio::io_context ioc;
    auto agent_cfg = test_agent_config();
    agent_cfg.port = 0;
    agent_cfg.session_ttl_min = 100ms;
    dev::agent agent{ioc.get_executor(), agent_cfg};
    agent.start();
    client_config cfg;
    cfg.host = "127.0.0.1";
    cfg.port = agent.port();
    client consul{ioc.get_executor(), cfg};
    constexpr auto as_value = asio::as_tuple(asio::use_awaitable);
    constexpr auto ttl = 2s;
    using steady = std::chrono::steady_clock;
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(
            consul, session_config{}.with_ttl(ttl).with_lock_delay(0ms));
        elector el{consul, "gone/leader"};
        bool leading = false;
        leader_task lead = [&](leadership) -> asio::awaitable<void> {
            leading = true;
            asio::steady_timer forever{ioc, steady::time_point::max()};
            co_await forever.async_wait(asio::use_awaitable);
        };
        steady::time_point gone_at{};
        auto server_goes = [&]() -> asio::awaitable<void> {
            while (!leading) {
                asio::steady_timer t{ioc, 10ms};
                co_await t.async_wait(asio::use_awaitable);
            }
            agent.stop(); // its port answers nothing any more
            gone_at = steady::now();
            asio::steady_timer forever{ioc, steady::time_point::max()};
            co_await forever.async_wait(asio::use_awaitable);
        };
        auto follow = [&]() -> asio::awaitable<void> {
            elector watcher{consul, "gone/leader"};
            auto changes = watcher.observe();
            for (;;) {
                auto [ec, leader] = co_await changes.async_next(as_value);
                if (ec)
                    co_return; // cancelled once the service has ended
            }
        };
        // The service: its session and its campaign, raced with errors as values (the
        // first to end ends the other), and a leader observer beside them.
        auto service = [&]() -> asio::awaitable<error_code> {
            auto ended = co_await (s.async_run(as_value) || el.async_run(s, lead, as_value));
            co_return std::visit([](const auto& r) { return std::get<0>(r); }, ended);
        };
        auto outcome = co_await ((service() || follow()) || server_goes());
        REQUIRE(outcome.index() <= 1);
        CHECK(leading);
        if (outcome.index() == 0) {
            const auto ec = std::get<0>(outcome);
            INFO(ec.message());
            CHECK((ec == errc::session_expired || ec == errc::lock_lost));
        }
        // By the session's local deadline (its TTL after the last renewal), with slack for
        // a loaded machine; not after a request timeout or a blocking wait.
        CHECK(steady::now() - gone_at < ttl + 5s);
    };
    run(ioc, body(), 60s);
}
