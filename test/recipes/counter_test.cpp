// SPDX-License-Identifier: BSL-1.0
// conclave::counter: reads and check-and-set writes of one key's number, exact sums under
// contention from several clients, the keys it refuses (not a number, another recipe's), an
// add that would overflow, cancellation and unknown outcomes, and waits for a change that
// share one blocking query per client (proven by counting the client's requests).
#include "recipes_fixture.hpp"
#include "thrown_by.hpp"

#include <conclave/counter.hpp>
#include <conclave/lock.hpp>
#include <conclave/observer.hpp>

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

constexpr auto int64_max = std::numeric_limits<std::int64_t>::max();
constexpr auto int64_min = std::numeric_limits<std::int64_t>::min();

// What a client sent, as its observer saw it: KV reads started (blocking ones apart), the
// blocking reads in flight now, and hooks run when a plain KV read or a KV write starts.
struct request_counter : observer {
    std::size_t kv_gets = 0;
    std::size_t blocking_gets = 0;
    std::size_t blocking_in_flight = 0;
    std::size_t kv_puts = 0;
    std::function<void()> on_get, on_put;

    void request_started(std::string_view endpoint, bool blocking) override {
        if (endpoint == "kv_get") {
            ++kv_gets;
            if (blocking) {
                ++blocking_gets;
                ++blocking_in_flight;
            } else if (on_get) {
                on_get();
            }
        } else if (endpoint == "kv_put") {
            ++kv_puts;
            if (on_put)
                on_put();
        }
    }
    void request_finished(const request_event& e) override {
        if (e.endpoint == "kv_get" && e.blocking)
            --blocking_in_flight;
    }
};

} // namespace

TEST_CASE_METHOD(recipes_fixture, "a missing counter reads as 0 and the first add creates it",
                 "[counter]") {
    auto body = [&]() -> asio::awaitable<void> {
        counter hits{consul, p + "hits"};
        CHECK(hits.key() == p + "hits");
        const auto fresh = co_await hits.async_get();
        CHECK(fresh == counter_reading{0, 0});
        auto keys = co_await consul.async_kv_keys(p);
        CHECK(keys.keys.empty()); // a read writes nothing

        const std::int64_t five = co_await hits.async_add(5);
        CHECK(five == 5);
        auto raw = co_await consul.async_kv_get(p + "hits");
        REQUIRE(raw.entry);
        CHECK(raw.entry->value == "5"); // what `consul kv get` shows
        CHECK(raw.entry->flags == 0);
        const auto now = co_await hits.async_get();
        CHECK(now.value == 5);
        CHECK(now.index == raw.entry->modify_index);

        const std::int64_t less = co_await hits.async_add(-7);
        CHECK(less == -2);
        const std::int64_t next = co_await hits.async_next();
        CHECK(next == -1);
        const std::int64_t same = co_await hits.async_add(0); // reads, writes nothing
        CHECK(same == -1);
        const auto after = co_await hits.async_get();
        CHECK(after.value == -1);

        // A number written by hand (`echo 40 | consul kv put KEY -`) is a counter too.
        co_await consul.async_kv_put(p + "hits", " 40\n");
        const std::int64_t by_hand = co_await hits.async_add(2);
        CHECK(by_hand == 42);
        co_await consul.async_kv_delete(p + "hits");
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "concurrent adds from four clients sum exactly and each gets its own value",
                 "[counter]") {
    constexpr std::size_t clients = 4, coroutines = 5, adds = 5;
    std::vector<std::unique_ptr<client>> others;
    std::vector<std::unique_ptr<counter>> counters;
    for (std::size_t i = 0; i < clients; ++i) {
        others.push_back(std::make_unique<client>(ioc.get_executor(), server.client_config()));
        counters.push_back(std::make_unique<counter>(*others.back(), p + "sum",
                                                     counter_options{}.with_budget(60s)));
    }
    std::vector<std::int64_t> seen;
    std::vector<error_code> failures;
    countdown done{ioc.get_executor(), clients * coroutines};
    // (A coroutine lambda must outlive its coroutines: one closure, the index passed.)
    auto adder = [&](std::size_t i) -> asio::awaitable<void> {
        for (std::size_t k = 0; k < adds; ++k) {
            auto [e, v] = co_await counters[i]->async_add(1, conclave::as_outcome);
            if (e)
                failures.push_back(error_code_of(e));
            else
                seen.push_back(v);
        }
        done.count_down();
    };
    auto body = [&]() -> asio::awaitable<void> {
        for (std::size_t i = 0; i < clients; ++i)
            for (std::size_t j = 0; j < coroutines; ++j)
                asio::co_spawn(ioc, adder(i), asio::detached);
        co_await done.wait();
        CHECK(failures.empty());
        constexpr auto total = static_cast<std::int64_t>(clients * coroutines * adds);
        const auto end = co_await counters[0]->async_get();
        CHECK(end.value == total);
        // Every add wrote a value of its own: 1 .. total, each once.
        std::sort(seen.begin(), seen.end());
        std::vector<std::int64_t> expected(static_cast<std::size_t>(total));
        std::iota(expected.begin(), expected.end(), 1);
        CHECK(seen == expected);
        co_await consul.async_kv_delete(p + "sum");
    };
    run(ioc, body(), std::chrono::milliseconds{120000});
}

TEST_CASE_METHOD(recipes_fixture, "compare-and-set writes only over the expected value",
                 "[counter]") {
    auto body = [&]() -> asio::awaitable<void> {
        counter c{consul, p + "cas"};
        const bool created = co_await c.async_compare_and_set(0, 3); // missing = 0
        CHECK(created);
        const bool stale = co_await c.async_compare_and_set(0, 4);
        CHECK_FALSE(stale);
        const auto three = co_await c.async_get();
        CHECK(three.value == 3);

        const bool unchanged = co_await c.async_compare_and_set(3, 3); // true, no write
        CHECK(unchanged);
        const auto still = co_await c.async_get();
        CHECK(still == three);

        const bool negative = co_await c.async_compare_and_set(3, -1);
        CHECK(negative);
        const auto last = co_await c.async_get();
        CHECK(last.value == -1);
        CHECK(last.index > three.index);
        co_await consul.async_kv_delete(p + "cas");
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "set writes the value, creating the key", "[counter]") {
    auto body = [&]() -> asio::awaitable<void> {
        counter c{consul, p + "set"};
        co_await c.async_set(42);
        const auto got = co_await c.async_get();
        CHECK(got.value == 42);
        co_await c.async_set(-7);
        auto raw = co_await consul.async_kv_get(p + "set");
        REQUIRE(raw.entry);
        CHECK(raw.entry->value == "-7");
        co_await c.async_set(int64_min);
        const auto low = co_await c.async_get();
        CHECK(low.value == int64_min);
        co_await consul.async_kv_delete(p + "set");
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a key that is not a number is a conflict naming the key and its text, and is "
                 "left as it was",
                 "[counter]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto key = p + "words";
        co_await consul.async_kv_put(key, "twelve");
        counter c{consul, key};
        {
            auto [ec, what] = co_await thrown_by(c.async_get());
            CHECK(ec == errc::conflict);
            CHECK(contains(what, "key " + key + " is not a counter"));
            CHECK(contains(what, "\"twelve\""));
        }
        {
            auto [ec, what] = co_await thrown_by(c.async_add(1));
            CHECK(ec == errc::conflict);
            CHECK(contains(what, "\"twelve\""));
        }
        {
            auto [ec, what] = co_await thrown_by(c.async_set(1));
            CHECK(ec == errc::conflict);
        }
        {
            auto [ec, what] = co_await thrown_by(c.async_compare_and_set(0, 1));
            CHECK(ec == errc::conflict);
        }
        // With a token that keeps the error code, the options' diagnostics say the same.
        diagnostics diag;
        counter quiet{consul, key, counter_options{}.with_diag(&diag)};
        auto [ec, v] = co_await quiet.async_add(1, tuple_token);
        CHECK(ec == errc::conflict);
        CHECK(v == 0);
        CHECK(contains(diag.client_message, "\"twelve\" is not a decimal 64-bit integer"));

        auto raw = co_await consul.async_kv_get(key);
        REQUIRE(raw.entry);
        CHECK(raw.entry->value == "twelve");
        co_await consul.async_kv_delete(key);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a key of another recipe is a conflict and is never written",
                 "[counter]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto key = p + "foreign";
        struct flagged {
            std::uint64_t flags;
            const char* says;
        };
        const std::vector<flagged> cases{{lock_flag_value, "a lock's key"},
                                         {semaphore_flag_value, "a semaphore's key"},
                                         {0x72776c6f636b5752ULL, "a read-write lock's key"},
                                         {99, "flags 99"}};
        for (const auto& f : cases) {
            co_await consul.async_kv_put(key, "5", kv_put_options{}.with_flags(f.flags));
            counter c{consul, key};
            auto [ec, what] = co_await thrown_by(c.async_add(1));
            CHECK(ec == errc::conflict);
            CHECK(contains(what, key));
            CHECK(contains(what, f.says));
            auto [set_ec, set_what] = co_await thrown_by(c.async_set(9));
            CHECK(set_ec == errc::conflict);
            auto raw = co_await consul.async_kv_get(key);
            REQUIRE(raw.entry);
            CHECK(raw.entry->value == "5");
            CHECK(raw.entry->flags == f.flags);
        }
        co_await consul.async_kv_delete(key);

        // A lock held on the key.
        auto s = co_await session::async_create(consul, quick(5s));
        lock l{consul, p + "held"};
        auto lease = co_await l.async_acquire(s);
        counter c{consul, p + "held"};
        auto [ec, what] = co_await thrown_by(c.async_add(1));
        CHECK(ec == errc::conflict);
        CHECK(contains(what, "a lock's key"));
        co_await lease.async_release();
        co_await l.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "an add that would overflow fails and writes nothing",
                 "[counter]") {
    auto body = [&]() -> asio::awaitable<void> {
        counter c{consul, p + "big"};
        co_await c.async_set(int64_max - 1);
        const std::int64_t top = co_await c.async_add(1);
        CHECK(top == int64_max);
        auto [ec, what] = co_await thrown_by(c.async_add(1));
        CHECK(ec == errc::invalid_argument);
        CHECK(contains(what, "overflows"));
        CHECK(contains(what, "nothing written"));
        const auto still = co_await c.async_get();
        CHECK(still.value == int64_max);

        co_await c.async_set(int64_min);
        auto [low_ec, low_what] = co_await thrown_by(c.async_add(-1));
        CHECK(low_ec == errc::invalid_argument);
        const auto low = co_await c.async_get();
        CHECK(low.value == int64_min);
        co_await consul.async_kv_delete(p + "big");
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a cancelled add never completes with a value", "[counter]") {
    auto log = std::make_shared<request_counter>();
    auto cfg = server.client_config();
    cfg.observer = log;
    client c{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        const auto key = p + "cancel";
        diagnostics diag;
        counter n{c, key, counter_options{}.with_diag(&diag)};
        asio::cancellation_signal stop;
        auto token = asio::bind_cancellation_slot(stop.slot(), awaitable_tuple);

        // Cancelled while it reads, before it wrote anything: nothing is written.
        {
            log->on_get = [&] {
                asio::post(ioc, [&] { stop.emit(asio::cancellation_type::terminal); });
            };
            auto [ec, v] = co_await n.async_add(1, token);
            log->on_get = nullptr;
            CHECK(ec == asio::error::operation_aborted);
            CHECK(v == 0);
            CHECK(contains(diag.client_message, "nothing written"));
            auto raw = co_await c.async_kv_get(key);
            CHECK_FALSE(raw.entry);
        }
        // Cancelled while its write is on its way: the outcome is unknown, and said so.
        {
            log->on_put = [&] {
                asio::post(ioc, [&] { stop.emit(asio::cancellation_type::terminal); });
            };
            auto [ec, v] = co_await n.async_add(1, token);
            log->on_put = nullptr;
            CHECK(ec == asio::error::operation_aborted);
            CHECK(v == 0);
            CHECK(contains(diag.client_message, "outcome is unknown"));
            const auto now = co_await n.async_get();
            CHECK((now.value == 0 || now.value == 1)); // applied or not
        }
        // A write answered with a 500 (which a Raft apply that timed out also gives): unknown
        // too, not a value.
        {
            const auto before = co_await n.async_get();
            log->on_put = [&] { server.inject_errors("/v1/kv/" + key, 1, 500); };
            auto [ec, v] = co_await n.async_add(10, awaitable_tuple);
            log->on_put = nullptr;
            CHECK(ec == errc::server_error);
            CHECK(v == 0);
            CHECK(contains(diag.client_message, "outcome is unknown"));
            const auto after = co_await n.async_get();
            CHECK(after.value == before.value); // (this one was not applied)
        }
        co_await c.async_kv_delete(key);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a wait sees the next change, a deletion and a creation",
                 "[counter][watch]") {
    auto log = std::make_shared<request_counter>();
    auto cfg = server.client_config();
    cfg.observer = log;
    client watcher_client{ioc.get_executor(), cfg};
    client writer_client{ioc.get_executor(), server.client_config()};
    auto body = [&]() -> asio::awaitable<void> {
        const auto key = p + "seen";
        counter mine{watcher_client, key};
        counter writer{writer_client, key};
        co_await writer.async_set(1);
        const auto first = co_await mine.async_get();
        CHECK(first.value == 1);

        // An old index: the state is newer already, at once.
        const auto at_once = co_await mine.async_wait_change(0);
        CHECK(at_once == first);

        auto change = [&]() -> asio::awaitable<void> {
            // Once the waiter's blocking read is parked, another client adds.
            const bool parked =
                co_await eventually(ioc, [&] { return log->blocking_in_flight >= 1; });
            CHECK(parked);
            co_await writer.async_add(4);
        };
        auto wait = [&]() -> asio::awaitable<counter_reading> {
            co_return co_await mine.async_wait_change(first.index);
        };
        using namespace asio::experimental::awaitable_operators;
        const auto changed = co_await (wait() && change());
        CHECK(changed.value == 5);
        CHECK(changed.index > first.index);

        // A deletion comes back as {0, 0}; a wait at 0 then waits for the key to come back.
        auto remove = [&]() -> asio::awaitable<void> {
            co_await writer_client.async_kv_delete(key);
        };
        auto wait_changed = [&]() -> asio::awaitable<counter_reading> {
            co_return co_await mine.async_wait_change(changed.index);
        };
        const auto gone = co_await (wait_changed() && remove());
        CHECK(gone == counter_reading{0, 0});
        auto create = [&]() -> asio::awaitable<void> {
            const bool parked =
                co_await eventually(ioc, [&] { return log->blocking_in_flight >= 1; });
            CHECK(parked);
            co_await writer.async_add(7);
        };
        auto wait_created = [&]() -> asio::awaitable<counter_reading> {
            co_return co_await mine.async_wait_change(0);
        };
        const auto back = co_await (wait_created() && create());
        CHECK(back.value == 7);
        CHECK(back.index > 0);
        co_await consul.async_kv_delete(key);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a wait ends with a conflict when the key stops being a counter",
                 "[counter][watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto key = p + "spoiled";
        counter c{consul, key};
        co_await c.async_set(3);
        const auto before = co_await c.async_get();
        auto spoil = [&]() -> asio::awaitable<void> { co_await consul.async_kv_put(key, "three"); };
        auto wait = [&]() -> asio::awaitable<std::pair<error_code, std::string>> {
            co_return co_await thrown_by(c.async_wait_change(before.index));
        };
        using namespace asio::experimental::awaitable_operators;
        const auto [ec, what] = co_await (wait() && spoil());
        CHECK(ec == errc::conflict);
        CHECK(contains(what, "its value \"three\""));
        co_await consul.async_kv_delete(key);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a cancelled wait completes with operation_aborted",
                 "[counter][watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        counter c{consul, p + "quiet"};
        for (auto type : {asio::cancellation_type::terminal, asio::cancellation_type::total}) {
            cancel_after stop{ioc.get_executor(), 50ms, type};
            auto [ec, r] = co_await c.async_wait_change(0, stop.bind(awaitable_tuple));
            CHECK(ec == asio::error::operation_aborted);
            CHECK(r == counter_reading{});
        }
        auto keys = co_await consul.async_kv_keys(p);
        CHECK(keys.keys.empty());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "waits of one client on one key share one blocking query",
                 "[counter][watch]") {
    auto log = std::make_shared<request_counter>();
    auto cfg = server.client_config();
    cfg.observer = log;
    client watcher_client{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t objects = 4, waits_each = 4;
        const auto key = p + "shared";
        counter writer{consul, key};
        co_await writer.async_set(10);
        const auto start = co_await writer.async_get();

        std::vector<std::unique_ptr<counter>> counters;
        for (std::size_t i = 0; i < objects; ++i)
            counters.push_back(std::make_unique<counter>(watcher_client, key));
        std::vector<counter_reading> got;
        countdown done{ioc.get_executor(), objects * waits_each};
        auto waiter = [&](std::size_t i) -> asio::awaitable<void> {
            auto r = co_await counters[i]->async_wait_change(start.index);
            got.push_back(r);
            done.count_down();
        };
        log->kv_gets = 0;
        for (std::size_t i = 0; i < objects; ++i)
            for (std::size_t j = 0; j < waits_each; ++j)
                asio::co_spawn(ioc, waiter(i), asio::detached);
        const bool parked = co_await eventually(ioc, [&] { return log->blocking_in_flight >= 1; });
        CHECK(parked);
        CHECK(log->blocking_in_flight == 1); // one query for 16 waits on 4 objects
        CHECK(log->kv_gets == 2);            // a first plain read, then that blocking one

        co_await writer.async_add(1);
        co_await done.wait();
        REQUIRE(got.size() == objects * waits_each);
        for (const auto& r : got)
            CHECK(r.value == 11);
        // The blocking read's answer served them all; the query may have blocked once more
        // before the waits had left.
        CHECK(log->kv_gets <= 3);
        co_await consul.async_kv_delete(key);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a counter needs a key", "[counter]") {
    auto make = [&] { counter c{consul, ""}; };
    CHECK_THROWS_AS(make(), boost::system::system_error);
}
