// SPDX-License-Identifier: BSL-1.0
#include "harness/harness.hpp"
#include "harness/scenarios.hpp"
#include "harness/stats.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <memory>
#include <unistd.h>

namespace conclave::bench {

harness::harness(const options& o, asio::io_context& c, bench_target& t, report& r)
    : opt(o)
    , ioc(c)
    , target(t)
    , out(r) {}

std::string harness::fresh_prefix(const std::string& scenario) {
    return "conclave-bench/" + std::to_string(::getpid()) + "/" + scenario + "-" +
           std::to_string(++runs_);
}

const rtt_baseline& harness::baseline() {
    if (!baseline_) {
        // Short and quiet: only the reference for ratios and bounds.
        const record r = measure_rtt(*this, 1, std::max(0.5, opt.duration_s / 3));
        rtt_baseline b;
        b.ops_per_s = r.number("ops_per_s").value_or(0);
        b.p50_us = r.number("p50_us").value_or(0);
        b.p99_us = r.number("p99_us").value_or(0);
        b.mean_us = r.number("mean_us").value_or(0);
        baseline_ = b;
    }
    return *baseline_;
}

record harness::base_record(const std::string& scenario, const std::string& impl,
                            std::size_t contenders) const {
    record r;
    r.set("scenario", scenario);
    r.set("impl", impl);
    r.set("agent", target.kind());
    r.set("contenders", double(contenders));
    if (!opt.fair)
        r.set("local_turn", double(bench_lock_options(false).local_turn));
    return r;
}

std::string harness::self_exe() const {
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, std::size_t(n)) : std::string("conclave-bench");
}

std::size_t harness::pool_size(std::size_t wanted) const {
    return opt.connections ? opt.connections : wanted;
}

void run_sync(asio::io_context& ioc, asio::awaitable<void> aw) {
    bool done = false;
    std::exception_ptr failure;
    asio::co_spawn(ioc, std::move(aw), [&](std::exception_ptr e) {
        failure = e;
        done = true;
    });
    while (!done) {
        if (ioc.stopped())
            ioc.restart();
        ioc.run_one();
    }
    if (failure)
        std::rethrow_exception(failure);
}

asio::awaitable<void> sleep_until_ns(std::int64_t t_ns) {
    const std::int64_t left = t_ns - monotonic_ns();
    if (left <= 0)
        co_return;
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::nanoseconds(left));
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<void> sleep_for_us(std::int64_t us) {
    if (us <= 0)
        co_return;
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::microseconds(us));
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
}

latch::latch(asio::any_io_executor ex, std::size_t n)
    : timer_(ex, asio::steady_timer::time_point::max())
    , left_(n) {}

void latch::count_down() {
    if (left_ > 0 && --left_ == 0)
        timer_.cancel();
}

asio::awaitable<void> latch::wait() {
    while (left_ > 0)
        co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<void> spawn_all(std::size_t n,
                                const std::function<asio::awaitable<void>(std::size_t)>& fn) {
    auto ex = co_await asio::this_coro::executor;
    latch done(ex, n);
    std::exception_ptr first;
    for (std::size_t i = 0; i < n; ++i)
        asio::co_spawn(ex, fn(i), [&](std::exception_ptr e) {
            if (e && !first)
                first = e;
            done.count_down();
        });
    co_await done.wait();
    if (first)
        std::rethrow_exception(first);
}

asio::awaitable<void>
for_each_bounded(std::size_t n, std::size_t concurrency,
                 const std::function<asio::awaitable<void>(std::size_t)>& fn) {
    std::size_t next = 0;
    std::function<asio::awaitable<void>(std::size_t)> lane =
        [&](std::size_t) -> asio::awaitable<void> {
        while (next < n)
            co_await fn(next++);
    };
    co_await spawn_all(std::min(n, concurrency), lane);
}

namespace {

asio::awaitable<void> show_progress(std::shared_ptr<bool> stop, std::string label, double seconds,
                                    std::function<std::size_t()> ops) {
    const auto t0 = monotonic_ns();
    while (!*stop) {
        const double el = double(monotonic_ns() - t0) / 1e9;
        std::fprintf(stderr, "\r\033[K  %s  %.1f/%.1f s  %zu ops", label.c_str(), el, seconds,
                     ops());
        std::fflush(stderr);
        co_await sleep_for_us(250000);
    }
}

} // namespace

progress::progress(asio::io_context& ioc, std::string label, double seconds,
                   std::function<std::size_t()> ops)
    : stop_(std::make_shared<bool>(false)) {
    if (!::isatty(STDERR_FILENO) || seconds < 1.0)
        return;
    shown_ = true;
    asio::co_spawn(ioc, show_progress(stop_, std::move(label), seconds, std::move(ops)),
                   [](std::exception_ptr) {});
}

progress::~progress() {
    *stop_ = true;
    if (shown_) {
        std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
    }
}

} // namespace conclave::bench
