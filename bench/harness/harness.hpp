// SPDX-License-Identifier: BSL-1.0
// What every scenario shares: the options, the event loop, the target, the report, the raw
// round-trip baseline, and small helpers to run coroutines from plain code.
#pragma once

#include "harness/cli_options.hpp"
#include "harness/report.hpp"
#include "harness/target.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>

namespace conclave::bench {

namespace asio = boost::asio;

/// The completion token of the bench's awaited operations: errors come back as values, to
/// be counted, not thrown.
inline constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

/// The raw GET round trip on one connection: the unit the targets are expressed in.
struct rtt_baseline {
    double ops_per_s = 0;
    double p50_us = 0, p99_us = 0, mean_us = 0;
};

class harness {
public:
    harness(const options& o, asio::io_context& ioc, bench_target& t, report& r);

    const options& opt;
    asio::io_context& ioc;
    bench_target& target;
    report& out;

    /// A key prefix no earlier run used (runs share one agent).
    std::string fresh_prefix(const std::string& scenario);
    /// The 1-connection rtt baseline, measured on first use (or taken from an rtt run).
    const rtt_baseline& baseline();
    void set_baseline(const rtt_baseline& b) { baseline_ = b; }
    /// The first fields of every record.
    record base_record(const std::string& scenario, const std::string& impl,
                       std::size_t contenders) const;
    /// This executable, for worker and crash-holder child processes.
    std::string self_exe() const;
    /// A pool bound: --connections when given, else `wanted`.
    std::size_t pool_size(std::size_t wanted) const;

private:
    std::size_t runs_ = 0;
    std::optional<rtt_baseline> baseline_;
};

/// Runs `aw` on `ioc` until it completes (other work on the loop runs meanwhile); rethrows.
void run_sync(asio::io_context& ioc, asio::awaitable<void> aw);

template <class T>
asio::awaitable<void> discard_result(asio::awaitable<T> aw) {
    co_await std::move(aw);
}
/// Same for an operation with a result (dropped).
template <class T>
void run_sync(asio::io_context& ioc, asio::awaitable<T> aw) {
    run_sync(ioc, discard_result(std::move(aw)));
}

/// Sleeps until a CLOCK_MONOTONIC time (see monotonic_ns).
asio::awaitable<void> sleep_until_ns(std::int64_t t_ns);
asio::awaitable<void> sleep_for_us(std::int64_t us);

/// Counts down completions; wait() returns when the count reaches zero.
class latch {
public:
    latch(asio::any_io_executor ex, std::size_t n);
    void count_down();
    asio::awaitable<void> wait();

private:
    asio::steady_timer timer_;
    std::size_t left_;
};

/// Runs fn(0..n-1) as n concurrent coroutines and waits for all; rethrows the first failure
/// after all ended. `fn` must outlive the call (pass a named object).
asio::awaitable<void> spawn_all(std::size_t n,
                                const std::function<asio::awaitable<void>(std::size_t)>& fn);

/// Like spawn_all with at most `concurrency` running at a time (bulk setup and teardown).
asio::awaitable<void> for_each_bounded(std::size_t n, std::size_t concurrency,
                                       const std::function<asio::awaitable<void>(std::size_t)>& fn);

/// A live progress line on stderr while a long run goes (only when stderr is a tty).
class progress {
public:
    progress(asio::io_context& ioc, std::string label, double seconds,
             std::function<std::size_t()> ops);
    ~progress();
    progress(const progress&) = delete;
    progress& operator=(const progress&) = delete;

private:
    std::shared_ptr<bool> stop_;
    bool shown_ = false;
};

} // namespace conclave::bench
