// SPDX-License-Identifier: BSL-1.0
// multilock: N contenders, each with its own session, take the same k keys, hold them for
// --hold-us and release them, in a loop. Either with a multi_lock (one transaction takes
// them all, one releases them), or as a user would without one: k conclave::locks taken one
// by one in key order, then released one by one in that order. Ordered, the baseline cannot
// deadlock, but a waiter holds the first keys while it waits for the next. Latency is the
// acquire: call -> every key held.
#include "harness/scenarios.hpp"

#include <conclave/multi_lock.hpp>

#include <cstdio>

namespace conclave::bench {

namespace {

struct multi_run : contender_run {
    bool together = true; ///< a multi_lock; else the locks in order
    std::vector<std::string> keys;
    bool fair = false;
    std::vector<grant> grants;
};

const char* variant(bool together) {
    return together ? "multi_lock" : "locks-in-order";
}

asio::awaitable<std::vector<conclave::grant>> take_together(multi_lock& m, session& s,
                                                            std::chrono::milliseconds budget) {
    auto got = co_await m.async_try_acquire(s, budget, use_tuple);
    std::vector<conclave::grant> held;
    held.push_back(granted(std::move(got), "multi_lock acquire"));
    co_return held;
}

asio::awaitable<std::vector<conclave::grant>> take_in_order(std::vector<lock>& locks, session& s,
                                                            std::chrono::milliseconds budget) {
    std::vector<conclave::grant> held;
    for (auto& l : locks) {
        auto got = co_await l.async_try_acquire(s, budget, use_tuple);
        held.push_back(granted(std::move(got), "locks in order: lock acquire"));
    }
    co_return held;
}

asio::awaitable<void> multi_contender(client c, multi_run& run, std::size_t i) {
    session& s = run.sessions[i];
    std::optional<multi_lock> together;
    std::vector<lock> in_order;
    if (run.together)
        together.emplace(c, run.keys);
    else
        for (const auto& key : run.keys)
            in_order.emplace_back(c, key, bench_lock_options(run.fair));
    co_await sleep_until_ns(run.start_ns);
    while (monotonic_ns() < run.t1) {
        grant g;
        g.contender = std::uint32_t(i);
        g.start_ns = monotonic_ns();
        const auto budget = acquire_budget(run.t1);
        std::vector<conclave::grant> held;
        if (together)
            held = co_await take_together(*together, s, budget);
        else
            held = co_await take_in_order(in_order, s, budget);
        g.acquired_ns = monotonic_ns();
        co_await sleep_for_us(run.hold_us);
        for (const auto& lease : held) {
            auto [rec] = co_await lease.async_release(use_tuple);
            if (rec)
                throw boost::system::system_error(rec, "multilock release");
        }
        g.released_ns = monotonic_ns();
        run.grants.push_back(g);
    }
}

void multilock_run(harness& h, std::size_t k, std::size_t n, bool together) {
    client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(n + k + 8))};
    multi_run run;
    run.together = together;
    const std::string prefix = h.fresh_prefix("multilock");
    for (std::size_t j = 0; j < k; ++j) {
        std::string number = std::to_string(j);
        number.insert(0, number.size() < 2 ? "0" : ""); // names in key order
        run.keys.push_back(prefix + "/k" + number);
    }
    run.fair = h.opt.fair;
    run.plan(h, n);
    window w;
    run_with_sessions(
        h, c, run, "bench-multilock", "multilock",
        std::string("multilock ") + variant(together) + " k=" + std::to_string(k) +
            " N=" + std::to_string(n),
        [&] { return run.grants.size(); },
        [&](std::size_t i) { return multi_contender(c, run, i); }, w);

    auto res = analyze(run.grants, n, run.t0, run.t1);
    record r = h.base_record("multilock", "conclave", n);
    r.set("variant", std::string(variant(together)));
    r.set("keys", double(k));
    r.set("hold_us", double(run.hold_us));
    const auto d = fill_contention(r, res, w);
    // The whole set passes from one holder to the next: release ack of the last key -> the
    // next holder's ack of its last key.
    if (n > 1) {
        r.set("handoff_p50_us", r.number("p50_us").value_or(0));
        r.set("handoff_p99_us", r.number("p99_us").value_or(0));
    }
    // Both ways take several writes per grant (k locks, or one transaction of 2k
    // operations): report writes per grant rather than "acquire attempts".
    report_writes_per_grant(r, d, res.grants);
    report_acquire_waits(r, res.waits);
    h.out.add(std::move(r));
}

} // namespace

void scenario_multilock(harness& h) {
    const std::vector<std::size_t> ks =
        h.opt.keys ? std::vector<std::size_t>{h.opt.keys} : std::vector<std::size_t>{1, 4, 16};
    for (std::size_t k : ks)
        for (std::size_t n : contender_counts(h, {1, 8}))
            for (bool together : {true, false}) {
                // A failed run is reported and the next one still runs.
                try {
                    multilock_run(h, k, n, together);
                } catch (const std::exception& e) {
                    std::fprintf(stderr, "conclave-bench: multilock %s k=%zu N=%zu failed: %s\n",
                                 variant(together), k, n, e.what());
                    record r = h.base_record("multilock", "conclave", n);
                    r.set("variant", std::string(variant(together)));
                    r.set("keys", double(k));
                    r.set("error", std::string(e.what()));
                    h.out.add(std::move(r));
                }
            }
}

} // namespace conclave::bench
