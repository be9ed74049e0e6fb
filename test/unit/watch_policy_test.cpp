// SPDX-License-Identifier: BSL-1.0
// The blocking-query loop of a watch: index rules and pacing, without clocks or sockets.
#include "recipes/watch/watch_policy.hpp"
#include "support/catch.hpp"

#include <boost/asio/error.hpp>

using conclave::errc;
using conclave::make_error_code;
using conclave::detail::watch_policy;
using namespace std::chrono_literals;
using tp = watch_policy::clock::time_point;
using verdict = watch_policy::verdict;

namespace {

// wait 5 s, no min_interval, backoff 100 ms .. 10 s.
watch_policy make(std::chrono::milliseconds min_interval = 0ms, std::uint64_t seed = 1) {
    return watch_policy{5s, min_interval, 100ms, 10s, seed};
}

// One query: started at `start`, answered `after` later with `index`.
verdict reply(watch_policy& p, tp start, std::chrono::milliseconds after, std::uint64_t index) {
    p.on_start(start);
    return p.on_reply(index, start + after);
}

} // namespace

TEST_CASE("the first query is a non-blocking read, sent at once", "[watch]") {
    auto p = make();
    CHECK(p.query_index() == 0);
    CHECK(p.next_start() <= tp{});
}

TEST_CASE("the next query blocks on the reply's index", "[watch]") {
    const tp t0{};
    auto p = make();
    CHECK(reply(p, t0, 1ms, 7) == verdict::advanced);
    CHECK(p.query_index() == 7);
    CHECK(p.next_start() == t0); // no min_interval: right away
    CHECK(reply(p, t0 + 1s, 300ms, 12) == verdict::advanced);
    CHECK(p.query_index() == 12);
    CHECK(p.next_start() == t0 + 1s);
}

TEST_CASE("an index of 0 from the server counts as 1: 0 is never sent as a blocking index",
          "[watch]") {
    const tp t0{};
    auto p = make();
    CHECK(reply(p, t0, 1ms, 0) == verdict::advanced);
    CHECK(p.query_index() == 1);
    // A blocking reply with 0 is not "backwards past 0" either: same index (1).
    CHECK(reply(p, t0 + 6s, 5s, 0) == verdict::same);
    CHECK(p.query_index() == 1);
}

TEST_CASE("an index going backwards resets to a non-blocking re-read", "[watch]") {
    const tp t0{};
    auto p = make();
    reply(p, t0, 1ms, 50);
    // A long blocking query interrupted by a restart: the re-read may go at once.
    CHECK(reply(p, t0 + 1s, 60s, 3) == verdict::reset);
    CHECK(p.query_index() == 0);
    CHECK(p.next_start() <= t0 + 61s);
    // The re-read is usable whatever its index, and the loop blocks on it afterwards.
    CHECK(reply(p, t0 + 61s, 1ms, 4) == verdict::advanced);
    CHECK(p.query_index() == 4);
}

TEST_CASE("a server that keeps moving its index back is slowed down exponentially", "[watch]") {
    tp t{};
    auto p = make();
    reply(p, t, 0ms, 10);
    for (unsigned n = 1; n <= 8; ++n) {
        t = std::max(t, p.next_start());
        REQUIRE(reply(p, t, 0ms, 5) == verdict::reset); // blocking at 10 returns 5 at once
        CHECK(p.query_index() == 0);
        // The re-read waits for the stall backoff, measured from the stalled query's start.
        CHECK(p.next_start() >= t + p.backoff(n) / 2);
        CHECK(p.next_start() <= t + p.backoff(n));
        t = p.next_start();
        REQUIRE(reply(p, t, 0ms, 10) == verdict::advanced); // the re-read says 10 again
        CHECK(p.next_start() == t);         // the re-read does not forget the stalls...
        CHECK(p.consecutive_stalls() == n); // ...so the next cycle waits longer
    }
}

TEST_CASE("backoff doubles from the initial value and stops at max_backoff", "[watch]") {
    auto p = make();
    CHECK(p.backoff(1) == 100ms);
    CHECK(p.backoff(2) == 200ms);
    CHECK(p.backoff(3) == 400ms);
    CHECK(p.backoff(7) == 6400ms);
    CHECK(p.backoff(8) == 10s);
    CHECK(p.backoff(1000) == 10s);
}

TEST_CASE("retryable errors back off with jitter in [b/2, b], from the failure", "[watch]") {
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
        tp t{};
        auto p = make(0ms, seed);
        reply(p, t, 1ms, 5);
        for (unsigned n = 1; n <= 10; ++n) {
            p.on_start(t);
            const tp failed = t + 3ms;
            CHECK(p.on_error(make_error_code(errc::server_error), failed));
            CHECK(p.consecutive_failures() == n);
            const auto delay = p.next_start() - failed;
            CHECK(delay >= p.backoff(n) / 2);
            CHECK(delay <= p.backoff(n));
            CHECK(delay <= 10s);
            CHECK(p.query_index() == 0); // a non-blocking re-read comes next
            t = p.next_start();
        }
        reply(p, t, 1ms, 6);
        CHECK(p.consecutive_failures() == 0);
    }
}

TEST_CASE("which errors are retried", "[watch]") {
    const tp t0{};
    auto p = make();
    CHECK(p.on_error(make_error_code(errc::server_error), t0));
    CHECK(p.on_error(make_error_code(errc::timeout), t0));
    CHECK(p.on_error(make_error_code(errc::rate_limited), t0));
    CHECK(p.on_error(make_error_code(errc::unavailable), t0));
    CHECK(p.on_error(boost::asio::error::connection_refused, t0));
    CHECK_FALSE(p.on_error(make_error_code(errc::permission_denied), t0));
    CHECK_FALSE(p.on_error(make_error_code(errc::bad_request), t0));
    CHECK_FALSE(p.on_error(make_error_code(errc::invalid_argument), t0));
    CHECK_FALSE(p.on_error(make_error_code(errc::pool_closed), t0));
}

TEST_CASE("a final error still paces the next call", "[watch]") {
    const tp t0{};
    auto p = make();
    CHECK_FALSE(p.on_error(make_error_code(errc::permission_denied), t0));
    CHECK(p.next_start() >= t0 + 50ms);
    CHECK_FALSE(p.on_error(make_error_code(errc::permission_denied), t0 + 100ms));
    CHECK(p.next_start() >= t0 + 200ms); // a caller looping on 403 is slowed down too
}

TEST_CASE("a normal timeout (same index after the whole wait) costs nothing", "[watch]") {
    const tp t0{};
    auto p = make();
    reply(p, t0, 1ms, 9);
    tp t = t0 + 1ms;
    for (int i = 0; i < 20; ++i) {
        CHECK(reply(p, t, 5s + 100ms, 9) == verdict::same);
        CHECK(p.consecutive_stalls() == 0);
        CHECK(p.next_start() <= t + 5s + 100ms); // the next query may start at once
        t += 5s + 100ms;
    }
    CHECK(p.query_index() == 9);
}

TEST_CASE("a server answering at once with the same index cannot make the loop spin", "[watch]") {
    tp t{};
    auto p = make();
    reply(p, t, 1ms, 9);
    int queries = 0;
    // A minute of a server that answers every blocking query at once, index unchanged.
    while (t < tp{} + 60s) {
        t = std::max(t, p.next_start());
        CHECK(reply(p, t, 0ms, 9) == verdict::same);
        ++queries;
        CHECK(p.next_start() - t >= p.backoff(p.consecutive_stalls()) / 2);
    }
    // 50 ms, 100 ms, ... up to 5-10 s each: a handful of queries, not thousands.
    CHECK(queries <= 20);
    CHECK(p.consecutive_stalls() == static_cast<unsigned>(queries));
    // Real news ends the stall.
    CHECK(reply(p, t, 2ms, 10) == verdict::advanced);
    CHECK(p.consecutive_stalls() == 0);
    CHECK(p.next_start() == t);
}

TEST_CASE("a wait shorter than the initial backoff still cannot spin", "[watch]") {
    tp t{};
    watch_policy p{1ms, 0ms, 100ms, 1s, 3};
    reply(p, t, 0ms, 4);
    for (unsigned n = 1; n <= 5; ++n) {
        t = std::max(t, p.next_start());
        CHECK(reply(p, t, 1ms, 4) == verdict::same); // "timed out" after 1 ms
        CHECK(p.consecutive_stalls() == n);
        CHECK(p.next_start() >= t + p.backoff(n) / 2);
    }
}

TEST_CASE("min_interval spaces query starts when the data churns", "[watch]") {
    tp t{};
    auto p = make(250ms);
    reply(p, t, 1ms, 1);
    CHECK(p.next_start() == t + 250ms);
    for (std::uint64_t i = 2; i < 10; ++i) {
        t = p.next_start();
        CHECK(reply(p, t, 1ms, i) == verdict::advanced);
        CHECK(p.next_start() == t + 250ms); // every reply had news, still one per 250 ms
    }
    // A long blocking query already took longer than the interval: no extra wait.
    t = p.next_start();
    reply(p, t, 2s, 20);
    CHECK(p.next_start() < t + 2s);
}

TEST_CASE("the effective wait follows Consul's default and cap", "[watch]") {
    CHECK(watch_policy::effective_wait(0ms) == 5min);
    CHECK(watch_policy::effective_wait(-1ms) == 5min);
    CHECK(watch_policy::effective_wait(30s) == 30s);
    CHECK(watch_policy::effective_wait(20min) == 10min);
}

TEST_CASE("after a failed query the next is a non-blocking read that reports only a change",
          "[watch]") {
    const tp t0{};
    auto p = make();
    REQUIRE(reply(p, t0, 1ms, 500) == verdict::advanced);
    // A server that restarted with less history: the failure (a closed connection), then a
    // non-blocking read that finds a lower index, which is the new state.
    p.on_start(t0 + 1s);
    CHECK(p.on_error(make_error_code(boost::asio::error::connection_reset), t0 + 1s));
    CHECK(p.query_index() == 0);
    CHECK(reply(p, t0 + 2s, 1ms, 3) == verdict::advanced);
    CHECK(p.query_index() == 3);
    // A failure on the same server: the re-read finds the same index, nothing to report.
    p.on_start(t0 + 3s);
    CHECK(p.on_error(make_error_code(errc::server_error), t0 + 3s));
    CHECK(p.query_index() == 0);
    CHECK(reply(p, t0 + 4s, 1ms, 3) == verdict::same);
    CHECK(p.query_index() == 3); // blocks again
}
