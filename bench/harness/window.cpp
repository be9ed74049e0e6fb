// SPDX-License-Identifier: BSL-1.0
#include "harness/window.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <string>

namespace conclave::bench {

window_reading window_reading::now(const client& c) {
    window_reading r;
    r.cpu_us = process_cpu_time().count();
    r.requests = c.stats().requests;
    return r;
}

window_reading window_reading::now(harness& h, const client& c) {
    window_reading r = now(c);
    r.agent = h.target.counters();
    return r;
}

std::optional<agent_counters> window::agent() const {
    if (start.agent && end.agent)
        return end.agent->since(*start.agent);
    return std::nullopt;
}

namespace {

window_reading read(harness* h, const client& c) {
    return h ? window_reading::now(*h, c) : window_reading::now(c);
}

asio::awaitable<void> measure(harness* h, client c, std::int64_t t0, std::int64_t t1, window& w,
                              std::function<asio::awaitable<void>()> work) {
    std::function<asio::awaitable<void>(std::size_t)> parts =
        [&](std::size_t i) -> asio::awaitable<void> {
        if (i == 0) {
            co_await work();
        } else {
            co_await sleep_until_ns(t0);
            w.start = read(h, c);
            co_await sleep_until_ns(t1);
            w.end = read(h, c);
        }
    };
    co_await spawn_all(2, parts);
}

} // namespace

asio::awaitable<void> measure_window(harness& h, client c, std::int64_t t0, std::int64_t t1,
                                     window& w, std::function<asio::awaitable<void>()> work) {
    return measure(&h, std::move(c), t0, t1, w, std::move(work));
}

asio::awaitable<void> measure_window(client c, std::int64_t t0, std::int64_t t1, window& w,
                                     std::function<asio::awaitable<void>()> work) {
    return measure(nullptr, std::move(c), t0, t1, w, std::move(work));
}

asio::awaitable<void> raw_lock_write(client& c, const std::string& key,
                                     const std::string& session) {
    std::vector<txn_op> ops{txn_op::lock(key, session, "bench", lock_flag_value)};
    auto r = co_await c.async_txn(std::move(ops), txn_options{}, asio::use_awaitable);
    if (!r.committed)
        throw std::runtime_error("write: the lock operation was refused on " + key);
}

asio::awaitable<std::int64_t> idle_round_trip(client c, std::string key) {
    co_await sleep_for_us(idle_settle_us);
    const std::int64_t start = monotonic_ns();
    auto [ec, entry] =
        co_await c.async_kv_get(key, query_options{}, asio::as_tuple(asio::use_awaitable));
    if (ec)
        throw boost::system::system_error(ec, "idle GET");
    co_return monotonic_ns() - start;
}

std::optional<agent_counters> fill_contention(record& r, contention_result& res, const window& w) {
    auto d = w.agent();
    fill_contention(r, res, d, w.cpu_us());
    set_client_requests(r, w.requests());
    return d;
}

summary add_latencies(record& r, std::vector<std::chrono::nanoseconds>& samples) {
    for (const auto& s : samples)
        r.latencies_us.push_back(double(s.count()) / 1000.0);
    std::sort(r.latencies_us.begin(), r.latencies_us.end());
    return summarize(samples);
}

session_config bench_session_config(const char* name) {
    session_config cfg;
    cfg.with_name(name).with_lock_delay(std::chrono::milliseconds(0));
    return cfg;
}

asio::awaitable<session> start_session(client c, session_config cfg, const char* what) {
    auto [ec, s] = co_await session::async_create(c, cfg, asio::as_tuple(asio::use_awaitable));
    if (ec)
        throw boost::system::system_error(ec, std::string(what) + ": session create");
    s.async_run(asio::detached);
    co_return s;
}

asio::awaitable<session> start_session(client c, const char* name, const char* what) {
    const session_config cfg = bench_session_config(name); // named (g++ 12: no temporaries
    co_return co_await start_session(c, cfg, what);        // in a co_await expression)
}

void report_writes_per_grant(record& r, const std::optional<agent_counters>& d,
                             std::size_t grants) {
    r.erase("acquire_attempts_per_handoff");
    r.erase("handoffs");
    if (d && grants)
        r.set("kv_writes_per_op", double(d->kv_writes()) / double(grants));
}

void contender_run::plan(const harness& h, std::size_t n) {
    hold_us = h.opt.hold_us;
    sessions.resize(n);
    // Time to create the sessions first (a millisecond each, and some more).
    start_ns = monotonic_ns() + 200'000'000 + std::int64_t(n) * 1'000'000;
    t0 = start_ns + std::int64_t(h.opt.duration_s * 1e8);
    t1 = t0 + std::int64_t(h.opt.duration_s * 1e9);
}

std::chrono::milliseconds acquire_budget(std::int64_t end_ns) {
    return std::chrono::milliseconds((end_ns - monotonic_ns()) / 1'000'000 + 20000);
}

asio::awaitable<void> hold_and_release(conclave::grant held, long hold_us, grant& g,
                                       const char* what) {
    g.acquired_ns = monotonic_ns();
    co_await sleep_for_us(hold_us);
    auto [ec] = co_await held.async_release(use_tuple);
    if (ec)
        throw boost::system::system_error(ec, what);
    g.released_ns = monotonic_ns();
}

void report_acquire_waits(record& r, std::vector<std::chrono::nanoseconds>& waits) {
    r.latencies_us.clear();
    const auto s = add_latencies(r, waits);
    r.set("latency", std::string("acquire"));
    set_percentiles(r, s);
}

void run_with_sessions(harness& h, client& c, contender_run& run, const char* name,
                       const char* what, const std::string& label,
                       std::function<std::size_t()> done,
                       std::function<asio::awaitable<void>(std::size_t)> contender, window& w) {
    auto& sessions = run.sessions;
    const std::size_t n = sessions.size();
    std::function<asio::awaitable<void>(std::size_t)> create =
        [&](std::size_t i) -> asio::awaitable<void> {
        sessions[i] = co_await start_session(c, name, what);
    };
    std::function<asio::awaitable<void>()> contend = [&]() -> asio::awaitable<void> {
        co_await for_each_bounded(n, 16, create);
        co_await spawn_all(n, contender);
    };
    std::function<asio::awaitable<void>(std::size_t)> destroy =
        [&](std::size_t i) -> asio::awaitable<void> {
        co_await sessions[i].async_destroy(asio::as_tuple(asio::use_awaitable));
    };
    progress pr(h.ioc, label, double(run.t1 - monotonic_ns()) / 1e9, std::move(done));
    std::exception_ptr failure;
    try {
        run_sync(h.ioc, measure_window(h, c, run.t0, run.t1, w, contend));
    } catch (...) {
        failure = std::current_exception();
    }
    run_sync(h.ioc, for_each_bounded(n, 16, destroy));
    if (failure)
        std::rethrow_exception(failure);
}

} // namespace conclave::bench
