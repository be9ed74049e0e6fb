// SPDX-License-Identifier: BSL-1.0
// cycle: one holder with a live session acquires and releases one lock in a loop, watching
// the lease while it holds it (the usual `co_await (lease.async_wait_lost() || work())`).
// The uncontended cost of the lock: requests per cycle, and rate against the raw GET and the
// raw write (one lock transaction, bench/scenarios/write.cpp), which take turns with the
// cycles (slices of 100 ms) so that all three see the same machine. On a dev agent a write
// costs about a GET; on Consul it is a Raft commit, and the write is the floor to judge by.
#include "harness/scenarios.hpp"
#include "harness/window.hpp"
#include "peers/go_peer.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave::bench {

using namespace boost::asio::experimental::awaitable_operators;
namespace {

// The holder's work: one turn of the loop, plus --hold-us. A monitor's query starts 1 ms
// after the monitor (docs/howto/locks.md, "Many waiters"): with a shorter hold the lease is
// released before it goes out; --hold-us 2000 shows what the query costs a longer section.
asio::awaitable<void> work(long hold_us) {
    co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    co_await sleep_for_us(hold_us);
}

struct cycle_run {
    std::int64_t t0 = 0, t1 = 0;
    std::vector<std::chrono::nanoseconds> samples;
    std::size_t done = 0, lost = 0;
    std::int64_t cycle_ns = 0; ///< time spent in cycle slices of the measured window
    std::int64_t cpu_us = 0;   ///< CPU spent in them
    std::int64_t get_ns = 0;   ///< time spent in GET slices of the measured window
    std::size_t gets = 0;      ///< GETs in them
    std::int64_t write_ns = 0; ///< time spent in write slices of the measured window
    std::size_t writes = 0;    ///< raw writes in them
    client_stats c0, c1;
    std::optional<agent_counters> a0, a1;
};

// Cycles, raw GETs and raw writes take turns in slices of this length
// (shorter in a short run, so that it holds a few rounds), so that their rates are compared
// under the same machine state: on a shared VM the GET rate of two runs a second apart
// differs by more than the ratio is meant to show, so a ratio of separate runs is noise.
std::int64_t slice_ns(const harness& h) {
    return std::min<std::int64_t>(100'000'000, std::int64_t(h.opt.duration_s * 1e9 / 8));
}

// One acquire + release (and the hold); false when the lease was lost while held.
asio::awaitable<bool> one_cycle(harness& h, lock& l, session& s) {
    auto [ec, lease] = co_await l.async_acquire(s, use_tuple);
    if (ec)
        throw boost::system::system_error(ec, "cycle: acquire");
    bool kept = true;
    if (h.opt.monitor) {
        auto both = co_await (lease.async_wait_lost(use_tuple) || work(h.opt.hold_us));
        kept = both.index() != 0; // lost while held: should never happen here
    } else {
        co_await work(h.opt.hold_us);
    }
    auto [rec] = co_await lease.async_release(use_tuple);
    if (rec)
        throw boost::system::system_error(rec, "cycle: release");
    co_return kept;
}

asio::awaitable<void> cycle_loop(harness& h, client c, client raw, session s, std::string key,
                                 std::string get_key, cycle_run& run) {
    lock l{c, key, bench_lock_options(h.opt.fair)};
    bool sampled0 = false;
    while (monotonic_ns() < run.t1) {
        const bool measured = monotonic_ns() >= run.t0;
        if (measured && !sampled0) {
            // Counters read between two cycles, so the window holds whole cycles.
            sampled0 = true;
            run.c0 = c.stats();
            run.a0 = h.target.counters();
        }
        // A slice of cycles.
        const std::int64_t start = monotonic_ns();
        const std::int64_t cpu0 = process_cpu_time().count();
        while (monotonic_ns() < start + slice_ns(h)) {
            const auto st = monotonic_ns();
            const bool kept = co_await one_cycle(h, l, s);
            if (measured) {
                run.samples.emplace_back(monotonic_ns() - st);
                ++run.done;
                run.lost += kept ? 0 : 1;
            }
        }
        const std::int64_t took = monotonic_ns() - start;
        if (measured) {
            run.cycle_ns += took;
            run.cpu_us += process_cpu_time().count() - cpu0;
        }
        // A slice of raw GETs as long as it (rtt's loop: one connection, one key).
        const std::int64_t get_start = monotonic_ns();
        std::size_t gets = 0;
        while (monotonic_ns() < get_start + took) {
            auto r = co_await raw.async_kv_get(get_key, query_options{}, asio::use_awaitable);
            if (!r.entry)
                throw std::runtime_error("cycle: the GET key vanished");
            ++gets;
        }
        if (measured) {
            run.get_ns += monotonic_ns() - get_start;
            run.gets += gets;
        }
        // And of raw writes on the lock's client (one lock transaction each).
        const std::int64_t write_start = monotonic_ns();
        std::size_t writes = 0;
        while (monotonic_ns() < write_start + took) {
            co_await raw_lock_write(c, key + "-write", s.id());
            ++writes;
        }
        if (measured) {
            run.write_ns += monotonic_ns() - write_start;
            run.writes += writes;
        }
    }
    run.c1 = c.stats();
    run.a1 = h.target.counters();
}

asio::awaitable<void> cycle_main(harness& h, client c, cycle_run& run) {
    session s = co_await start_session(c, "bench-cycle", "cycle");
    const std::string key = h.fresh_prefix("cycle") + "/lock";
    const std::string get_key = key + "-get";
    client raw{c.get_executor(), h.target.make_config(1)};
    co_await raw.async_kv_put(get_key, "value", kv_put_options{}, use_tuple);
    // The window counts from here, after the setup, however long that took (on a busy
    // machine it outlasted a window counted from the start, which then measured nothing).
    // A tenth of the run, and 50 ms, warm up first.
    run.t0 = monotonic_ns() + std::int64_t(h.opt.duration_s * 1e8) + 50'000'000;
    run.t1 = run.t0 + std::int64_t(h.opt.duration_s * 1e9);
    co_await cycle_loop(h, c, raw, s, key, get_key, run);
    co_await raw.async_kv_delete(get_key, kv_delete_options{}, use_tuple);
    co_await s.async_destroy(use_tuple);
    co_await c.async_kv_delete(key + "-write", kv_delete_options{}, use_tuple);
    co_await c.async_kv_delete(key, kv_delete_options{}, use_tuple);
}

} // namespace

void scenario_cycle(harness& h) {
    const rtt_baseline base = h.baseline();
    client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(4))};
    cycle_run run;
    {
        progress p(h.ioc, "cycle", h.opt.duration_s * 1.1 + 0.05, [&] { return run.done; });
        run_sync(h.ioc, cycle_main(h, c, run));
    }

    record r = h.base_record("cycle", "conclave", 1);
    const auto sum = add_latencies(r, run.samples);
    const double secs = double(run.cycle_ns) / 1e9;
    const double ops = secs > 0 ? double(sum.count) / secs : 0;
    const double n = sum.count ? double(sum.count) : 1.0;
    r.set("monitor", h.opt.monitor);
    r.set("fair", h.opt.fair && lock_has_fair_mode());
    r.set("ops", double(sum.count));
    r.set("ops_per_s", ops);
    r.set("latency", std::string("cycle"));
    set_percentiles(r, sum);
    r.set("cpu_us_per_op", double(run.cpu_us) / n);
    // Less the interleaved raw writes, which went through the lock's client.
    r.set("client_requests_per_op",
          (double(run.c1.requests - run.c0.requests) - double(run.writes)) / n);
    r.set("connects_per_op", double(run.c1.connects - run.c0.connects) / n);
    // The raw GET rate of the slices between the cycles' (same machine state), and the
    // run's separate rtt baseline.
    const double get_rate = run.get_ns > 0 ? double(run.gets) / (double(run.get_ns) / 1e9) : 0;
    r.set("rtt_ops_per_s", get_rate);
    r.set("rtt_baseline_ops_per_s", base.ops_per_s);
    const double rate_ratio = get_rate > 0 ? ops / get_rate : 0;
    r.set("rate_vs_rtt", rate_ratio);
    // A cycle is two writes: against half the raw write rate of the slices between.
    const double write_rate =
        run.write_ns > 0 ? double(run.writes) / (double(run.write_ns) / 1e9) : 0;
    r.set("write_ops_per_s", write_rate);
    const double write_ratio = write_rate > 0 ? ops / (write_rate / 2) : 0;
    r.set("rate_vs_write", write_ratio);
    // On Consul writes bound the cycle; on the dev agent, where a write costs a GET, the
    // GET is the stricter yardstick.
    bool met = h.target.is_consul() ? write_ratio >= 0.9 : rate_ratio >= 0.45;
    if (run.a0 && run.a1) {
        const auto d = run.a1->since(*run.a0);
        // Less the interleaved GETs, which are not the lock's.
        const double req = (double(d.requests) - double(run.gets)) / n;
        r.set("requests_per_handoff", req);
        r.set("requests_per_cycle", req);
        r.set("acquire_attempts_per_handoff",
              std::max(0.0, double(d.kv_writes()) - double(sum.count)) / n);
        met = met && req <= 4.0;
    }
    r.set("leases_lost", double(run.lost));
    r.set("target", std::string(h.target.is_consul() ? "rate>=0.9 x write rate / 2"
                                                     : "requests<=4, rate>=0.45 x rtt rate"));
    r.set("target_met", met);
    h.out.add(std::move(r));
    run_go_beside(h, "cycle", 1);
}

} // namespace conclave::bench
