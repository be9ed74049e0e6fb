// SPDX-License-Identifier: BSL-1.0
// write: the raw write floor. One client, one session, one key; each request is one
// transaction holding one KV lock operation (what an acquire sends, and nothing else), one
// after another. On Consul every write is a Raft commit, so writes, not GETs, bound a lock:
// a cycle is two writes, and `cycle` is judged against half this rate.
#include "harness/scenarios.hpp"
#include "harness/window.hpp"

namespace conclave::bench {

namespace {

struct write_run {
    std::int64_t t0 = 0, t1 = 0;
    std::vector<std::chrono::nanoseconds> samples;
    std::size_t done = 0;
    window w;
};

asio::awaitable<void> write_main(harness& h, client c, write_run& run) {
    session s = co_await start_session(c, "bench-write", "write");
    const std::string key = h.fresh_prefix("write") + "/lock";
    bool sampled0 = false;
    while (monotonic_ns() < run.t1) {
        if (!sampled0 && monotonic_ns() >= run.t0) {
            sampled0 = true;
            run.w.start = window_reading::now(c);
        }
        const auto st = monotonic_ns();
        co_await raw_lock_write(c, key, s.id());
        if (st >= run.t0) {
            run.samples.emplace_back(monotonic_ns() - st);
            ++run.done;
        }
    }
    run.w.end = window_reading::now(c);
    co_await s.async_destroy(use_tuple); // (its lock is released; the key stays)
    co_await c.async_kv_delete(key, kv_delete_options{}, use_tuple);
}

} // namespace

void scenario_write(harness& h) {
    client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(1))};
    write_run run;
    run.t0 =
        monotonic_ns() + std::int64_t(h.opt.duration_s * 1e9 * h.opt.warmup_fraction) + 50'000'000;
    run.t1 = run.t0 + std::int64_t(h.opt.duration_s * 1e9);
    {
        progress p(h.ioc, "write", h.opt.duration_s * 1.1 + 0.05, [&] { return run.done; });
        run_sync(h.ioc, write_main(h, c, run));
    }
    record r = h.base_record("write", "conclave", 1);
    const auto sum = add_latencies(r, run.samples);
    const double n = sum.count ? double(sum.count) : 1.0;
    r.set("ops", double(sum.count));
    r.set("ops_per_s", double(sum.count) / (double(run.t1 - run.t0) / 1e9));
    r.set("latency", std::string("request"));
    set_percentiles(r, sum);
    r.set("mean_us", sum.mean_us);
    r.set("cpu_us_per_op", double(run.w.cpu_us()) / n);
    r.set("client_requests_per_op", double(run.w.requests()) / n);
    h.out.add(std::move(r));
}

} // namespace conclave::bench
