// cycle: one holder with a live session acquires and releases one lock in a loop, watching
// the lease while it holds it (the usual `co_await (lease.async_wait_lost() || work())`).
// The uncontended cost of the lock: requests per cycle and rate against the raw GET.
#include "scenarios.hpp"
#include "stats.hpp"
#include "sync_floor.hpp"

#include <conclave/session.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave::bench {

using namespace boost::asio::experimental::awaitable_operators;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

namespace {

// The holder's work: one turn of the loop, plus --hold-us. A monitor's query starts 1 ms
// after the monitor (docs/recipes.md): with a shorter hold the lease is released before
// it goes out; --hold-us 2000 shows what the query costs a longer section.
asio::awaitable<void> work(long hold_us) {
    co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    co_await sleep_for_us(hold_us);
}

struct cycle_run {
    std::int64_t t0 = 0, t1 = 0;
    std::vector<std::chrono::nanoseconds> samples;
    std::size_t done = 0, lost = 0;
    std::int64_t cpu0 = 0, cpu1 = 0;
    client_stats c0, c1;
    std::optional<agent_counters> a0, a1;
    std::optional<sync_floor> floor;
};

asio::awaitable<void> cycle_loop(harness& h, client c, session s, std::string key, cycle_run& run) {
    lock l{c, key, bench_lock_options(h.opt.fair)};
    bool sampled0 = false;
    while (monotonic_ns() < run.t1) {
        if (!sampled0 && monotonic_ns() >= run.t0) {
            // Counters read between two cycles, so the window holds whole cycles.
            sampled0 = true;
            run.cpu0 = process_cpu_time().count();
            run.c0 = c.stats();
            run.a0 = h.target.counters();
        }
        const auto st = monotonic_ns();
        auto [ec, lease] = co_await l.async_acquire(s, use_tuple);
        if (ec)
            throw boost::system::system_error(ec, "cycle: acquire");
        if (h.opt.monitor) {
            auto both = co_await (lease.async_wait_lost(use_tuple) || work(h.opt.hold_us));
            if (both.index() == 0)
                ++run.lost; // the lease was lost while held: should never happen here
        } else {
            co_await work(h.opt.hold_us);
        }
        auto [rec] = co_await lease.async_release(use_tuple);
        if (rec)
            throw boost::system::system_error(rec, "cycle: release");
        if (sampled0) {
            run.samples.emplace_back(monotonic_ns() - st);
            ++run.done;
        }
    }
    run.cpu1 = process_cpu_time().count();
    run.c1 = c.stats();
    run.a1 = h.target.counters();
    run.t1 = monotonic_ns(); // the true end of the last whole cycle
}

asio::awaitable<void> cycle_main(harness& h, client c, cycle_run& run) {
    session_config cfg; // named: no temporaries inside a co_await expression (g++ 12)
    cfg.with_name("bench-cycle").with_lock_delay(std::chrono::milliseconds(0));
    auto [ec, s] = co_await session::async_create(c, cfg, use_tuple);
    if (ec)
        throw boost::system::system_error(ec, "cycle: session create");
    s.async_run(asio::detached);
    const std::string key = h.fresh_prefix("cycle") + "/lock";
    co_await cycle_loop(h, c, s, key, run);
    if (h.target.kind() != "embedded") // (it blocks this thread: the agent must be elsewhere)
        run.floor = measure_sync_floor(c.config(), key + "-floor", s.id(),
                                       std::max(0.5, h.opt.duration_s / 3));
    co_await s.async_destroy(use_tuple);
    co_await c.async_kv_delete(key + "-floor", kv_delete_options{}, use_tuple);
    co_await c.async_kv_delete(key, kv_delete_options{}, use_tuple);
}

} // namespace

void scenario_cycle(harness& h) {
    const rtt_baseline base = h.baseline();
    client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(4))};
    cycle_run run;
    run.t0 = monotonic_ns() + std::int64_t(h.opt.duration_s * 1e8) + 50'000'000;
    run.t1 = run.t0 + std::int64_t(h.opt.duration_s * 1e9);
    {
        progress p(h.ioc, "cycle", h.opt.duration_s * 1.1 + 0.05, [&] { return run.done; });
        run_sync(h.ioc, cycle_main(h, c, run));
    }

    record r = h.base_record("cycle", "conclave", 1);
    for (const auto& s : run.samples)
        r.latencies_us.push_back(double(s.count()) / 1000.0);
    std::sort(r.latencies_us.begin(), r.latencies_us.end());
    const auto sum = summarize(run.samples);
    const double secs = double(run.t1 - run.t0) / 1e9;
    const double ops = double(sum.count) / secs;
    const double n = sum.count ? double(sum.count) : 1.0;
    r.set("monitor", h.opt.monitor);
    r.set("fair", h.opt.fair && lock_has_fair_mode());
    r.set("ops", double(sum.count));
    r.set("ops_per_s", ops);
    r.set("latency", std::string("cycle"));
    r.set("p50_us", sum.p50_us);
    r.set("p90_us", sum.p90_us);
    r.set("p99_us", sum.p99_us);
    r.set("p999_us", sum.p999_us);
    r.set("max_us", sum.max_us);
    r.set("cpu_us_per_op", double(run.cpu1 - run.cpu0) / n);
    r.set("client_requests_per_op", double(run.c1.requests - run.c0.requests) / n);
    r.set("connects_per_op", double(run.c1.connects - run.c0.connects) / n);
    r.set("rtt_ops_per_s", base.ops_per_s);
    const double rate_ratio = base.ops_per_s > 0 ? ops / base.ops_per_s : 0;
    r.set("rate_vs_rtt", rate_ratio);
    bool met = rate_ratio >= 0.45;
    if (run.a0 && run.a1) {
        const auto d = run.a1->since(*run.a0);
        const double req = double(d.requests) / n;
        r.set("requests_per_handoff", req);
        r.set("requests_per_cycle", req);
        r.set("acquire_attempts_per_handoff",
              std::max(0.0, double(d.kv_writes()) - double(sum.count)) / n);
        met = met && req <= 4.0;
    }
    if (run.floor) {
        // The same cycle by the cheapest synchronous client (bench/sync_floor.hpp): the
        // kernel's share, which no client avoids.
        r.set("floor_cpu_us_per_op", run.floor->cpu_us_per_cycle);
        r.set("floor_ops_per_s", run.floor->cycles_per_s);
        r.set("cpu_vs_floor", double(run.cpu1 - run.cpu0) / n / run.floor->cpu_us_per_cycle);
    }
    r.set("leases_lost", double(run.lost));
    r.set("target", std::string("requests<=4, rate>=0.45 x rtt rate"));
    r.set("target_met", met);
    h.out.add(std::move(r));
}

} // namespace conclave::bench
