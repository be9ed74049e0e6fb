// SPDX-License-Identifier: BSL-1.0
// watch: one writer, M watchers of one key. The writer writes a sequence number, and writes
// the next one only when every watcher has seen it (so nothing coalesces); the latency is
// the write's ack -> each watcher's notification.
#include "harness/scenarios.hpp"

#include <conclave/watch.hpp>

#include <boost/asio/use_awaitable.hpp>

namespace conclave::bench {

namespace {

struct watch_run {
    std::string key;
    std::size_t watchers = 1;
    std::int64_t t0 = 0, t1 = 0;
    std::vector<std::int64_t> ack_ns{0};         ///< by sequence number
    std::vector<std::vector<std::int64_t>> seen; ///< per watcher: notification time by seq
    std::size_t caught_up = 0;                   ///< watchers that saw the latest write
    std::size_t notifications = 0;
    std::unique_ptr<latch> all_seen;
};

asio::awaitable<void> watcher(client c, watch_run& run, std::size_t i) {
    watch w{c, watch::key(run.key), watch_options{}.with_wait(std::chrono::seconds(30))};
    for (;;) {
        auto [ec, snap] = co_await w.async_next(use_tuple);
        const std::int64_t now = monotonic_ns();
        if (ec)
            throw boost::system::system_error(ec, "watch");
        if (snap.entries.empty())
            continue;
        const std::string& v = snap.entries.front().value;
        if (v == "stop")
            co_return;
        const std::size_t seq = std::stoul(v);
        auto& seen = run.seen[i];
        if (seen.size() <= seq)
            seen.resize(seq + 1, 0);
        seen[seq] = now;
        ++run.notifications;
        if (run.all_seen && seq + 1 == run.ack_ns.size())
            run.all_seen->count_down();
    }
}

asio::awaitable<void> writer(client c, watch_run& run) {
    auto ex = co_await asio::this_coro::executor;
    for (std::size_t seq = 1; monotonic_ns() < run.t1; ++seq) {
        run.all_seen = std::make_unique<latch>(ex, run.watchers);
        run.ack_ns.push_back(0);
        auto [ec, ok] =
            co_await c.async_kv_put(run.key, std::to_string(seq), kv_put_options{}, use_tuple);
        run.ack_ns[seq] = monotonic_ns();
        if (ec || !ok)
            throw std::runtime_error("watch: write failed");
        co_await run.all_seen->wait();
    }
    run.all_seen.reset();
    co_await c.async_kv_put(run.key, "stop", kv_put_options{}, use_tuple);
}

} // namespace

void scenario_watch(harness& h) {
    const std::size_t m = h.opt.watchers;
    client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(m + 4))};
    watch_run run;
    run.key = h.fresh_prefix("watch") + "/key";
    run.watchers = m;
    run.seen.resize(m);
    run_sync(h.ioc, c.async_kv_put(run.key, "0", kv_put_options{}, asio::use_awaitable));
    run.t0 = monotonic_ns() + 200'000'000 + std::int64_t(h.opt.duration_s * 1e8);
    run.t1 = run.t0 + std::int64_t(h.opt.duration_s * 1e9);
    window w;
    std::function<asio::awaitable<void>(std::size_t)> watch_one = [&](std::size_t i) {
        return watcher(c, run, i);
    };
    std::function<asio::awaitable<void>(std::size_t)> parts =
        [&](std::size_t i) -> asio::awaitable<void> {
        if (i == 0) {
            co_await spawn_all(m, watch_one);
        } else {
            co_await sleep_for_us(100'000); // the watchers' first snapshots
            co_await writer(c, run);
        }
    };
    {
        progress pr(h.ioc, "watch M=" + std::to_string(m), double(run.t1 - monotonic_ns()) / 1e9,
                    [&] { return run.notifications; });
        run_sync(h.ioc,
                 measure_window(h, c, run.t0, run.t1, w, [&] { return spawn_all(2, parts); }));
    }
    run_sync(h.ioc, c.async_kv_delete(run.key, kv_delete_options{}, asio::use_awaitable));

    std::vector<std::chrono::nanoseconds> samples;
    std::size_t writes = 0;
    for (std::size_t seq = 1; seq < run.ack_ns.size(); ++seq) {
        const std::int64_t ack = run.ack_ns[seq];
        if (ack < run.t0 || ack >= run.t1)
            continue;
        ++writes;
        for (const auto& seen : run.seen)
            if (seq < seen.size() && seen[seq] != 0)
                // A notification can be handled before the write's own ack: no delay then.
                samples.emplace_back(std::max<std::int64_t>(0, seen[seq] - ack));
    }
    record r = h.base_record("watch", "conclave", m);
    const auto sum = add_latencies(r, samples);
    const double secs = double(run.t1 - run.t0) / 1e9;
    r.set("watchers", double(m));
    r.set("writes", double(writes));
    r.set("writes_per_s", double(writes) / secs);
    r.set("ops", double(sum.count));
    r.set("ops_per_s", double(sum.count) / secs);
    r.set("latency", std::string("write ack -> notification"));
    set_percentiles(r, sum);
    r.set("missed", double(writes * m - sum.count));
    r.set("cpu_us_per_op", sum.count ? double(w.cpu_us()) / double(sum.count) : 0.0);
    if (const auto d = w.agent(); d && sum.count)
        r.set("requests_per_notification", double(d->requests) / double(sum.count));
    h.out.add(std::move(r));
}

} // namespace conclave::bench
