// SPDX-License-Identifier: BSL-1.0
// drain: N contenders start together, each takes the lock once and leaves. Total time from
// the start to the last release, against N x 3 raw round trips (Go's api.Lock takes seconds
// here: a contender refused while the key then looks free assumes a lock-delay and sleeps
// its fixed retry time; docs/benchmarks.md).
#include "harness/scenarios.hpp"
#include "peers/go_peer.hpp"

namespace conclave::bench {

void scenario_drain(harness& h) {
    const rtt_baseline base = h.baseline();
    for (std::size_t n : contender_counts(h, {64})) {
        client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(n + 8))};
        window w;
        contend_params p;
        p.prefix = h.fresh_prefix("drain");
        p.contenders = n;
        p.keys = 1;
        p.hold_us = h.opt.hold_us;
        p.fair = h.opt.fair;
        p.once = true;
        // Sessions are created before the start; the clock starts when all contend.
        p.start_ns = monotonic_ns() + 200'000'000 + std::int64_t(n) * 1'000'000;
        p.end_ns = p.start_ns + 600'000'000'000; // each leaves after one turn anyway
        p.before_cleanup = [&] { w.end = window_reading::now(h, c); };
        std::vector<grant> grants;
        std::function<asio::awaitable<void>(std::size_t)> parts =
            [&](std::size_t i) -> asio::awaitable<void> {
            if (i == 0) {
                co_await contend_core(c, p, grants);
            } else {
                co_await sleep_until_ns(p.start_ns - 1'000'000);
                w.start = window_reading::now(h, c);
            }
        };
        {
            progress pr(h.ioc, "drain N=" + std::to_string(n), 1.0, [&] { return grants.size(); });
            run_sync(h.ioc, spawn_all(2, parts));
        }
        std::int64_t last = p.start_ns;
        for (const auto& g : grants)
            last = std::max(last, g.released_ns);
        auto res = analyze(grants, n, p.start_ns - 1'000'000, last + 1);
        record r = h.base_record("drain", "conclave", n);
        r.set("fair", p.fair && lock_has_fair_mode());
        fill_contention(r, res, w);
        const double total_ms = double(last - p.start_ns) / 1e6;
        r.set("total_ms", total_ms);
        r.set("ops_per_s", double(n) / (total_ms / 1e3));
        // The acquisitions were all there was: per handoff = per acquisition.
        const double bound_ms = double(n) * 3 * base.mean_us / 1e3;
        r.set("bound_ms", bound_ms);
        r.set("target", std::string("total <= N x 3 raw round trips"));
        r.set("target_met", total_ms <= bound_ms);
        h.out.add(std::move(r));
        run_go_beside(h, "drain", n);
    }
}

} // namespace conclave::bench
