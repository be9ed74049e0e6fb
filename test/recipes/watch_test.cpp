// SPDX-License-Identifier: BSL-1.0
// conclave::watch: first snapshot, wake-ups, coalescing, key / prefix / keys targets,
// index resets, retried failures, cancellation.
#include "recipes_fixture.hpp"

#include <conclave/watch.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using steady = std::chrono::steady_clock;

namespace {

std::vector<std::string> values(const watch_snapshot& s) {
    std::vector<std::string> out;
    for (const auto& e : s.entries)
        out.push_back(e.value);
    return out;
}

std::vector<std::string> keys_of(const watch_snapshot& s) {
    std::vector<std::string> out;
    for (const auto& e : s.entries)
        out.push_back(e.key);
    return out;
}

} // namespace

struct watch_fixture : recipes_fixture {
    asio::awaitable<void> put(std::string key, std::string value) {
        auto ok = co_await consul.async_kv_put(std::move(key), std::move(value));
        REQUIRE(ok);
    }

    asio::awaitable<void> put_later(std::chrono::milliseconds delay, std::string key,
                                    std::string value) {
        co_await sleep(delay);
        co_await put(std::move(key), std::move(value));
    }

    asio::awaitable<void> remove(std::string key) {
        auto ok = co_await consul.async_kv_delete(std::move(key));
        REQUIRE(ok);
    }

    /// Deletes everything under the test prefix (the fixture checks nothing is left).
    asio::awaitable<void> clean() {
        auto opts = kv_delete_options{}.with_recurse();
        co_await consul.async_kv_delete(p, opts);
    }

    /// The next snapshot, which must not be an error.
    asio::awaitable<watch_snapshot> next_ok(watch& w) {
        auto [ec, snap] = co_await w.async_next(awaitable_tuple);
        REQUIRE_FALSE(ec);
        co_return snap;
    }

    std::uint64_t requests() const { return server.stats().requests; }
};

TEST_CASE_METHOD(watch_fixture, "the first snapshot is the current state, at once", "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await put(p + "a", "1");
        watch w{consul, watch::key(p + "a")};
        const auto start = steady::now();
        auto [ec, snap] = co_await w.async_next(tuple_token);
        CHECK(steady::now() - start < 2s); // at once: not after a blocking wait (5 min)
        REQUIRE_FALSE(ec);
        REQUIRE(snap.entries.size() == 1);
        CHECK(snap.entries[0].key == p + "a");
        CHECK(snap.entries[0].value == "1");
        CHECK(snap.index >= snap.entries[0].modify_index);
        CHECK(snap.keys.empty());
        CHECK(w.index() == snap.index);
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture, "a write wakes the watch within a second", "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await put(p + "a", "1");
        watch w{consul, watch::key(p + "a")};
        auto first = co_await w.async_next();
        steady::time_point write_start, woke;
        auto reader = [&]() -> asio::awaitable<watch_snapshot> {
            auto snap = co_await next_ok(w);
            woke = steady::now();
            co_return snap;
        };
        auto writer = [&]() -> asio::awaitable<void> {
            co_await sleep(200ms);
            write_start = steady::now();
            co_await put(p + "a", "2");
        };
        auto snap = co_await (reader() && writer());
        CHECK(woke - write_start < 1s);
        REQUIRE(snap.entries.size() == 1);
        CHECK(snap.entries[0].value == "2");
        CHECK(snap.index > first.index);
        CHECK(snap.index == snap.entries[0].modify_index);
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture, "writes between two calls give one snapshot, the latest",
                 "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await put(p + "a", "v0");
        watch w{consul, watch::key(p + "a")};
        auto first = co_await w.async_next();
        CHECK(values(first) == std::vector<std::string>{"v0"});
        co_await put(p + "a", "v1");
        co_await put(p + "a", "v2");
        co_await put(p + "a", "v3");
        const auto start = steady::now();
        auto [ec, snap] = co_await w.async_next(tuple_token);
        CHECK(steady::now() - start < 2s); // already changed: no blocking wait
        REQUIRE_FALSE(ec);
        CHECK(values(snap) == std::vector<std::string>{"v3"});
        // Nothing else is pending: the next call waits (here until the timer wins).
        auto outcome = co_await (w.async_next(awaitable_tuple) || sleep(300ms));
        CHECK(outcome.index() == 1);
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture, "an absent key is an explicit empty state, then appears, then goes",
                 "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        watch w{consul, watch::key(p + "later")};
        auto [ec, empty] = co_await w.async_next(tuple_token);
        REQUIRE_FALSE(ec);
        CHECK(empty.entries.empty());
        CHECK(empty.index > 0);
        // Writes next to the key wake Consul 1.8's blocking read of a missing key with a
        // higher index but no change: not reported.
        auto appeared = co_await (next_ok(w) && (put_later(50ms, p + "sibling", "x") &&
                                                 put_later(300ms, p + "later", "here")));
        CHECK(values(appeared) == std::vector<std::string>{"here"});
        // Deleted: a snapshot without the entry.
        co_await remove(p + "later");
        auto [ec3, gone] = co_await w.async_next(tuple_token);
        REQUIRE_FALSE(ec3);
        CHECK(gone.entries.empty());
        CHECK(gone.index > appeared.index);
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture, "a prefix watch reports every entry under the prefix", "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await put(p + "cfg/a", "1");
        co_await put(p + "cfg/b", "2");
        co_await put(p + "elsewhere", "0");
        watch w{consul, watch::prefix(p + "cfg/"), watch_options{}.with_wait(10s)};
        auto first = co_await w.async_next();
        CHECK(keys_of(first) == std::vector<std::string>{p + "cfg/a", p + "cfg/b"});
        CHECK(values(first) == std::vector<std::string>{"1", "2"});
        // A write outside the prefix does not count; one inside does.
        auto added = co_await (next_ok(w) && (put_later(50ms, p + "elsewhere", "1") &&
                                              put_later(250ms, p + "cfg/c", "3")));
        CHECK(values(added) == std::vector<std::string>{"1", "2", "3"});
        co_await remove(p + "cfg/b");
        auto removed = co_await w.async_next();
        CHECK(keys_of(removed) == std::vector<std::string>{p + "cfg/a", p + "cfg/c"});
        CHECK(removed.index > added.index);
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture, "a keys watch reports key names, collapsed at the separator",
                 "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await put(p + "k/x/1", "");
        co_await put(p + "k/x/2", "");
        co_await put(p + "k/y", "");
        watch w{consul, watch::keys(p + "k/", "/")};
        auto first = co_await w.async_next();
        CHECK(first.entries.empty());
        CHECK(first.keys == std::vector<std::string>{p + "k/x/", p + "k/y"});
        // k/x/3 changes the index but not the collapsed listing: no snapshot for it.
        auto snap = co_await (
            next_ok(w) && (put_later(50ms, p + "k/x/3", "") && put_later(300ms, p + "k/z", "")));
        CHECK(snap.keys == std::vector<std::string>{p + "k/x/", p + "k/y", p + "k/z"});

        watch all{consul, watch::keys(p + "k/")};
        auto flat = co_await all.async_next();
        CHECK(flat.keys.size() == 5);
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture,
                 "when the agent's index goes backwards during a wait, the watch re-reads",
                 "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 6; ++i) // push the index well above what a fresh agent has
            co_await put(p + "r/a", "v" + std::to_string(i));
        watch w{consul, watch::prefix(p + "r/")};
        auto before = co_await w.async_next();
        CHECK(values(before) == std::vector<std::string>{"v5"});
        steady::time_point restarted;
        auto restart = [&]() -> asio::awaitable<void> {
            co_await sleep(100ms);
            server.reset_state();      // wakes the blocked query with a lower index
            restarted = steady::now(); // (a real Consul's restart blocks the test meanwhile)
        };
        auto after = co_await (next_ok(w) && restart());
        CHECK(steady::now() - restarted < 1s);
        CHECK(after.entries.empty()); // everything is gone
        CHECK(after.index < before.index);
        // The watch blocks on the new, lower index: the next write is seen at once.
        auto fresh = co_await (next_ok(w) && put_later(100ms, p + "r/b", "new"));
        CHECK(values(fresh) == std::vector<std::string>{"new"});
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture,
                 "when the index went backwards between two calls, the watch recovers "
                 "within one wait",
                 "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 6; ++i)
            co_await put(p + "r/a", "v" + std::to_string(i));
        watch w{consul, watch::prefix(p + "r/"), watch_options{}.with_wait(500ms)};
        auto before = co_await w.async_next();
        server.reset_state();
        co_await put(p + "r/b", "after-restart");
        // The query blocks on an index the agent has not reached: its timeout brings the
        // lower index, the watch resets and re-reads.
        const auto start = steady::now();
        auto [ec, after] = co_await w.async_next(tuple_token);
        CHECK(steady::now() - start < 1500ms);
        REQUIRE_FALSE(ec);
        CHECK(values(after) == std::vector<std::string>{"after-restart"});
        CHECK(after.index < before.index);
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture, "reaped tombstones move a list index back without a report",
                 "[watch][dev-agent-only]") {
    if (skip_unless_dev_agent())
        return;
    auto body = [&]() -> asio::awaitable<void> {
        co_await put(p + "t/a", "1");
        co_await put(p + "t/b", "2");
        co_await remove(p + "t/b"); // the list index is now the tombstone's
        watch w{consul, watch::prefix(p + "t/"), watch_options{}.with_wait(300ms)};
        auto first = co_await w.async_next();
        CHECK(values(first) == std::vector<std::string>{"1"});
        server.agent()->reap_tombstones(); // the list index falls back to t/a's
        const auto before = requests();
        auto snap = co_await (next_ok(w) && put_later(1200ms, p + "t/c", "3"));
        // Same data after the reset: not reported; the write afterwards is.
        CHECK(values(snap) == std::vector<std::string>{"1", "3"});
        // ~1.2 s of 300 ms waits plus a re-read: a handful of queries, no spinning.
        CHECK(requests() - before <= 10);
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture, "injected 500s are retried with backoff, without spinning",
                 "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await put(p + "e", "1");
        watch w{consul, watch::key(p + "e")};
        auto first = co_await w.async_next();
        co_await put(p + "e", "2");
        server.inject_errors("/v1/kv/" + p + "e", 4, 500);
        const auto before = requests();
        const auto start = steady::now();
        auto [ec, snap] = co_await w.async_next(tuple_token);
        const auto took = steady::now() - start;
        REQUIRE_FALSE(ec); // the 500s never surfaced
        CHECK(values(snap) == std::vector<std::string>{"2"});
        CHECK(requests() - before == 5); // 4 failures, 1 success: no extra tries
        // Backoffs of at least 50, 100, 200 and 400 ms (jitter in [b/2, b]).
        CHECK(took >= 750ms);
        CHECK(took < 2s);
        CHECK(w.consecutive_failures() == 0);
        CHECK_FALSE(w.last_error());
        // And it keeps working.
        auto next = co_await (next_ok(w) && put_later(100ms, p + "e", "3"));
        CHECK(values(next) == std::vector<std::string>{"3"});
        (void)first;
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture, "a final error completes async_next and the watch stays usable",
                 "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await put(p + "f", "1");
        diagnostics diag;
        watch w{consul, watch::key(p + "f"), watch_options{}.with_diag(&diag)};
        server.inject_errors("/v1/kv/" + p + "f", 1, 403);
        const auto before = requests();
        auto [ec, snap] = co_await w.async_next(tuple_token);
        CHECK(ec == errc::permission_denied);
        CHECK(requests() - before == 1); // not retried
        CHECK(w.last_error() == errc::permission_denied);
        CHECK(diag.http_status == 403);
        // The next call still reports the first state (after a short backoff).
        auto [ec2, first] = co_await w.async_next(tuple_token);
        REQUIRE_FALSE(ec2);
        CHECK(values(first) == std::vector<std::string>{"1"});
        CHECK_FALSE(w.last_error());
        (void)snap;
        // A 400 is final too.
        server.inject_errors("/v1/kv/" + p + "f", 1, 400);
        auto [ec3, none] = co_await w.async_next(tuple_token);
        CHECK(ec3 == errc::bad_request);
        CHECK(none.entries.empty());
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture, "a cancelled async_next leaves the watch usable", "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await put(p + "c", "1");
        watch w{consul, watch::key(p + "c")};
        auto first = co_await w.async_next();

        // Terminal cancellation through a slot.
        asio::cancellation_signal cancel;
        asio::steady_timer t{ioc, 100ms};
        t.async_wait([&](error_code) { cancel.emit(asio::cancellation_type::terminal); });
        auto [ec, s] =
            co_await w.async_next(asio::bind_cancellation_slot(cancel.slot(), awaitable_tuple));
        CHECK(ec == asio::error::operation_aborted);
        CHECK(s.entries.empty());
        CHECK(w.index() == first.index); // nothing moved

        // Total cancellation is accepted too (nothing has changed when it lands).
        asio::steady_timer t2{ioc, 100ms};
        t2.async_wait([&](error_code) { cancel.emit(asio::cancellation_type::total); });
        auto [ec_total, s2] =
            co_await w.async_next(asio::bind_cancellation_slot(cancel.slot(), awaitable_tuple));
        CHECK(ec_total == asio::error::operation_aborted);
        (void)s2;

        // Cancelled by || as well.
        auto outcome = co_await (w.async_next(awaitable_tuple) || sleep(100ms));
        CHECK(outcome.index() == 1);

        // A change made while nobody was waiting is reported by the next call, at once.
        co_await put(p + "c", "2");
        auto [ec2, snap] = co_await w.async_next(tuple_token);
        REQUIRE_FALSE(ec2);
        CHECK(values(snap) == std::vector<std::string>{"2"});

        // One call at a time: a concurrent second call is refused at once.
        auto race = co_await (w.async_next(awaitable_tuple) || w.async_next(awaitable_tuple));
        REQUIRE(race.index() == 1);
        CHECK(std::get<0>(std::get<1>(race)) == errc::invalid_argument);

        // Still usable after all that.
        auto last = co_await (next_ok(w) && put_later(100ms, p + "c", "3"));
        CHECK(values(last) == std::vector<std::string>{"3"});
        co_await clean();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(watch_fixture, "min_interval limits snapshots when the data churns", "[watch]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await put(p + "m", "0");
        watch w{consul, watch::key(p + "m"), watch_options{}.with_min_interval(300ms)};
        auto first = co_await w.async_next();
        bool writing = true;
        auto writer = [&]() -> asio::awaitable<void> {
            for (int i = 1; i <= 20; ++i) {
                co_await put(p + "m", std::to_string(i));
                co_await sleep(50ms);
            }
            writing = false;
        };
        auto reader = [&]() -> asio::awaitable<int> {
            int snapshots = 0;
            std::string last;
            while (writing) {
                auto [ec, s] = co_await w.async_next(awaitable_tuple);
                REQUIRE_FALSE(ec);
                ++snapshots;
                last = s.entries.at(0).value;
                if (last == "20")
                    break;
            }
            co_return snapshots;
        };
        const auto start = steady::now();
        const int n = co_await (reader() && writer());
        const auto took = steady::now() - start;
        // ~1 s of writes every 50 ms, one query per 300 ms: at most ~5 snapshots, not 20.
        CHECK(n >= 1);
        CHECK(n <= static_cast<int>(took / 300ms) + 2);
        (void)first;
        co_await clean();
    };
    run(ioc, body());
}
