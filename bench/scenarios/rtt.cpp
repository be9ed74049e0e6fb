// SPDX-License-Identifier: BSL-1.0
// rtt: sequential GETs of one existing key, each coroutine on its own pooled connection.
// The floor every recipe builds on, and the unit the targets are written in.
#include "harness/scenarios.hpp"
#include "peers/go_peer.hpp"

#include <boost/asio/use_awaitable.hpp>

namespace conclave::bench {

namespace {

asio::awaitable<void> rtt_worker(client c, std::string key, std::int64_t t0, std::int64_t t1,
                                 std::vector<std::chrono::nanoseconds>& samples,
                                 std::size_t& done) {
    while (monotonic_ns() < t1) {
        const auto s = monotonic_ns();
        auto r = co_await c.async_kv_get(key, query_options{}, asio::use_awaitable);
        const auto e = monotonic_ns();
        if (!r.entry)
            throw std::runtime_error("benchmark key vanished");
        ++done;
        if (s >= t0)
            samples.emplace_back(e - s);
    }
}

} // namespace

record measure_rtt(harness& h, std::size_t connections, double seconds) {
    client c{h.ioc.get_executor(), h.target.make_config(connections)};
    const std::string key = h.fresh_prefix("rtt") + "/key";
    run_sync(h.ioc, c.async_kv_put(key, "value", kv_put_options{}, asio::use_awaitable));

    // A tenth of the run warms up (connections opened, caches filled) and is discarded.
    const std::int64_t t0 = monotonic_ns() + std::int64_t(seconds * 1e8);
    const std::int64_t t1 = t0 + std::int64_t(seconds * 1e9);
    std::vector<std::vector<std::chrono::nanoseconds>> per(connections);
    std::size_t done = 0;
    std::function<asio::awaitable<void>(std::size_t)> worker = [&](std::size_t i) {
        return rtt_worker(c, key, t0, t1, per[i], done);
    };
    window w;
    {
        progress p(h.ioc, "rtt c=" + std::to_string(connections), seconds * 1.1,
                   [&] { return done; });
        run_sync(h.ioc,
                 measure_window(h, c, t0, t1, w, [&] { return spawn_all(connections, worker); }));
    }
    run_sync(h.ioc, c.async_kv_delete(key, kv_delete_options{}, asio::use_awaitable));

    std::vector<std::chrono::nanoseconds> samples;
    for (auto& s : per)
        samples.insert(samples.end(), s.begin(), s.end());
    record r = h.base_record("rtt", "conclave", connections);
    const auto sum = add_latencies(r, samples);
    const double secs = double(t1 - t0) / 1e9;
    r.set("connections", double(connections));
    r.set("ops", double(sum.count));
    r.set("ops_per_s", double(sum.count) / secs);
    r.set("latency", std::string("request"));
    set_percentiles(r, sum);
    r.set("mean_us", sum.mean_us);
    r.set("cpu_us_per_op", sum.count ? double(w.cpu_us()) / double(sum.count) : 0.0);
    if (const auto d = w.agent(); d && sum.count)
        r.set("requests_per_op", double(d->requests) / double(sum.count));
    return r;
}

void scenario_rtt(harness& h) {
    // --connections picks one pool size; by default the single-connection floor and 16.
    std::vector<std::size_t> sizes{1, 16};
    if (h.opt.connections)
        sizes = {h.opt.connections};
    for (std::size_t conns : sizes) {
        record r = measure_rtt(h, conns, h.opt.duration_s);
        if (conns == 1) {
            rtt_baseline b;
            b.ops_per_s = r.number("ops_per_s").value_or(0);
            b.p50_us = r.number("p50_us").value_or(0);
            b.p99_us = r.number("p99_us").value_or(0);
            b.mean_us = r.number("mean_us").value_or(0);
            h.set_baseline(b);
        }
        h.out.add(std::move(r));
        if (conns == 1)
            run_go_beside(h, "rtt", 1); // (golock's rtt is one client's sequential GETs)
    }
}

} // namespace conclave::bench
