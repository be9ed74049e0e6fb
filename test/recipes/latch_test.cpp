// SPDX-License-Identifier: BSL-1.0
// conclave::countdown_latch: a count set only on an open latch, count downs from several
// clients that never lose one nor go below 0, a wait that ends exactly when the count
// reaches 0 and shares one blocking query per client, cancellation, and keys of other
// recipes refused with nothing written.
#include "blocking_reads.hpp"
#include "recipes_fixture.hpp"
#include "thrown_by.hpp"

#include <conclave/latch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

TEST_CASE_METHOD(recipes_fixture, "a latch's count is set only while it is open", "[latch]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto key = p + "loaded";
        countdown_latch latch{consul, key};
        CHECK(latch.key() == key);
        const auto none = co_await latch.async_get_count();
        CHECK(none == 0u);
        const auto [zero, why] = co_await thrown_by(latch.async_try_set_count(0));
        CHECK(zero == errc::invalid_argument);
        CHECK(contains(why, "a count must be above 0"));
        auto keys = co_await consul.async_kv_keys(p);
        CHECK(keys.keys.empty());

        const bool set = co_await latch.async_try_set_count(3);
        CHECK(set);
        const bool again = co_await latch.async_try_set_count(5);
        CHECK_FALSE(again); // set already: nothing written
        const auto three = co_await latch.async_get_count();
        CHECK(three == 3u);
        auto raw = co_await consul.async_kv_get(key);
        REQUIRE(raw.entry);
        CHECK(raw.entry->value == "3");
        CHECK(raw.entry->flags == latch_flag_value);
        co_await consul.async_kv_delete(key);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a count down stops at 0 where the key goes", "[latch]") {
    auto body = [&]() -> asio::awaitable<void> {
        countdown_latch latch{consul, p + "one"};
        co_await latch.async_try_set_count(1);
        const auto opened = co_await latch.async_count_down();
        CHECK(opened == 0u);
        const auto still = co_await latch.async_count_down(); // nothing written
        CHECK(still == 0u);
        const auto count = co_await latch.async_get_count();
        CHECK(count == 0u);
        auto keys = co_await consul.async_kv_keys(p);
        CHECK(keys.keys.empty());
        // Open again: a new count may be set.
        const bool reset = co_await latch.async_try_set_count(2);
        CHECK(reset);
        co_await latch.async_count_down();
        co_await latch.async_count_down();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a wait ends exactly when three clients have counted the latch down to 0",
                 "[latch]") {
    auto reads = std::make_shared<blocking_reads>();
    auto cfg = server.client_config();
    cfg.observer = reads;
    client waiter_client{ioc.get_executor(), cfg};
    std::vector<std::unique_ptr<client>> others;
    std::vector<std::unique_ptr<countdown_latch>> latches;
    for (int i = 0; i < 3; ++i) {
        others.push_back(std::make_unique<client>(ioc.get_executor(), server.client_config()));
        latches.push_back(std::make_unique<countdown_latch>(*others.back(), p + "three"));
    }
    auto body = [&]() -> asio::awaitable<void> {
        countdown_latch waiter{waiter_client, p + "three"};
        co_await latches[0]->async_try_set_count(3);
        bool passed = false;
        auto wait = [&]() -> asio::awaitable<void> {
            co_await waiter.async_wait();
            passed = true;
        };
        std::vector<std::uint64_t> left;
        auto count_down = [&]() -> asio::awaitable<void> {
            const bool parked = co_await eventually(ioc, [&] { return reads->in_flight >= 1; });
            CHECK(parked);
            // One down: the waiter's query sees it (its read answered, the next one parked)
            // and the waiter stays.
            const auto answered = reads->answered;
            left.push_back(co_await latches[0]->async_count_down());
            const bool seen = co_await eventually(
                ioc, [&] { return reads->answered > answered && reads->in_flight >= 1; });
            CHECK(seen);
            CHECK_FALSE(passed);
            // The other two at once, from two clients: no count down is lost.
            using namespace asio::experimental::awaitable_operators;
            auto [a, b] =
                co_await (latches[1]->async_count_down() && latches[2]->async_count_down());
            left.push_back(a);
            left.push_back(b);
        };
        using namespace asio::experimental::awaitable_operators;
        co_await (wait() && count_down());
        CHECK(passed);
        std::sort(left.begin(), left.end());
        CHECK(left == std::vector<std::uint64_t>{0, 1, 2});
        auto keys = co_await consul.async_kv_keys(p);
        CHECK(keys.keys.empty());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "the waits of one client on a latch share one query", "[latch]") {
    auto reads = std::make_shared<blocking_reads>();
    auto cfg = server.client_config();
    cfg.observer = reads;
    client waiter_client{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        countdown_latch setter{consul, p + "shared"};
        countdown_latch first{waiter_client, p + "shared"};
        countdown_latch second{waiter_client, p + "shared"};
        co_await setter.async_try_set_count(1);
        auto open = [&]() -> asio::awaitable<void> {
            const bool parked = co_await eventually(ioc, [&] { return reads->in_flight >= 1; });
            CHECK(parked);
            CHECK(reads->in_flight == 1);
            co_await setter.async_count_down();
        };
        using namespace asio::experimental::awaitable_operators;
        co_await (first.async_wait() && second.async_wait() && first.async_wait() && open());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a cancelled latch wait completes with operation_aborted",
                 "[latch]") {
    auto body = [&]() -> asio::awaitable<void> {
        countdown_latch latch{consul, p + "quiet"};
        co_await latch.async_try_set_count(1);
        for (auto type : {asio::cancellation_type::terminal, asio::cancellation_type::total}) {
            cancel_after stop{ioc.get_executor(), 100ms, type};
            auto [ec] = co_await latch.async_wait(stop.bind(awaitable_tuple));
            CHECK(ec == asio::error::operation_aborted);
        }
        const auto count = co_await latch.async_get_count();
        CHECK(count == 1u);
        co_await latch.async_count_down();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a latch key of another recipe is a conflict and is never written", "[latch]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto key = p + "counter";
        co_await consul.async_kv_put(key, "5"); // a counter's
        countdown_latch latch{consul, key};
        const auto [down, what] = co_await thrown_by(latch.async_count_down());
        CHECK(down == errc::conflict);
        CHECK(contains(what, "key " + key + " is not a countdown latch: it has flags 0"));
        const auto [set, set_what] = co_await thrown_by(latch.async_try_set_count(2));
        CHECK(set == errc::conflict);
        const auto [wait, wait_what] = co_await thrown_by(latch.async_wait());
        CHECK(wait == errc::conflict);
        const auto [get, get_what] = co_await thrown_by(latch.async_get_count());
        CHECK(get == errc::conflict);
        co_await consul.async_kv_put(key, "lots", kv_put_options{}.with_flags(latch_flag_value));
        const auto [text, text_what] = co_await thrown_by(latch.async_count_down());
        CHECK(text == errc::conflict);
        CHECK(contains(text_what, "its value \"lots\" is not a count"));
        auto raw = co_await consul.async_kv_get(key);
        REQUIRE(raw.entry);
        CHECK(raw.entry->value == "lots"); // untouched
        co_await consul.async_kv_delete(key);
    };
    run(ioc, body());
}
