// SPDX-License-Identifier: BSL-1.0
// write: the raw write floor. One client, one session, one key; each request is one
// transaction holding one KV lock operation (what an acquire sends, and nothing else), one
// after another. On Consul every write is a Raft commit, so writes, not GETs, bound a lock:
// a cycle is two writes, and `cycle` is judged against half this rate.
#include "harness/scenarios.hpp"
#include "harness/stats.hpp"
#include "peers/go_peer.hpp"

#include <conclave/session.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave::bench {

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct write_run {
    std::int64_t t0 = 0, t1 = 0;
    std::vector<std::chrono::nanoseconds> samples;
    std::size_t done = 0;
    std::int64_t cpu0 = 0, cpu1 = 0;
    std::uint64_t q0 = 0, q1 = 0;
};

asio::awaitable<void> write_main(harness& h, client c, write_run& run) {
    session_config cfg;
    cfg.with_name("bench-write").with_lock_delay(std::chrono::milliseconds(0));
    auto [ec, s] = co_await session::async_create(c, cfg, use_tuple);
    if (ec)
        throw boost::system::system_error(ec, "write: session create");
    s.async_run(asio::detached); // renewed however long the run
    const std::string key = h.fresh_prefix("write") + "/lock";
    bool sampled0 = false;
    while (monotonic_ns() < run.t1) {
        if (!sampled0 && monotonic_ns() >= run.t0) {
            sampled0 = true;
            run.cpu0 = process_cpu_time().count();
            run.q0 = c.stats().requests;
        }
        const auto st = monotonic_ns();
        co_await raw_lock_write(c, key, s.id());
        if (st >= run.t0) {
            run.samples.emplace_back(monotonic_ns() - st);
            ++run.done;
        }
    }
    run.cpu1 = process_cpu_time().count();
    run.q1 = c.stats().requests;
    co_await s.async_destroy(use_tuple); // (its lock is released; the key stays)
    co_await c.async_kv_delete(key, kv_delete_options{}, use_tuple);
}

} // namespace

asio::awaitable<void> raw_lock_write(client& c, const std::string& key,
                                     const std::string& session) {
    std::vector<txn_op> ops{txn_op::lock(key, session, "bench", lock_flag_value)};
    auto r = co_await c.async_txn(std::move(ops), txn_options{}, asio::use_awaitable);
    if (!r.committed)
        throw std::runtime_error("write: the lock operation was refused on " + key);
}

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
    for (const auto& s : run.samples)
        r.latencies_us.push_back(double(s.count()) / 1000.0);
    std::sort(r.latencies_us.begin(), r.latencies_us.end());
    const auto sum = summarize(run.samples);
    const double n = sum.count ? double(sum.count) : 1.0;
    r.set("ops", double(sum.count));
    r.set("ops_per_s", double(sum.count) / (double(run.t1 - run.t0) / 1e9));
    r.set("latency", std::string("request"));
    set_percentiles(r, sum);
    r.set("mean_us", sum.mean_us);
    r.set("cpu_us_per_op", double(run.cpu1 - run.cpu0) / n);
    r.set("client_requests_per_op", double(run.q1 - run.q0) / n);
    h.out.add(std::move(r));
}

} // namespace conclave::bench
