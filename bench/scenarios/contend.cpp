// SPDX-License-Identifier: BSL-1.0
// contend: N contenders on K keys, all in this process (one client) or spread over P worker
// processes (this executable, `_contend-worker`), each taking and releasing in a loop.
// Handoff latency is release ack -> the next holder's acquire ack on the same key.
#include "harness/piped_child.hpp"
#include "harness/scenarios.hpp"
#include "peers/go_peer.hpp"

#include <thread>

namespace conclave::bench {

namespace {

// Reads the agent's counters at t0 and t1 without an event loop (workers run elsewhere).
void sample_window(harness& h, std::int64_t t0, std::int64_t t1, std::optional<agent_counters>& a0,
                   std::optional<agent_counters>& a1) {
    auto sleep_until = [](std::int64_t t) {
        const std::int64_t left = t - monotonic_ns();
        if (left > 0)
            std::this_thread::sleep_for(std::chrono::nanoseconds(left));
    };
    sleep_until(t0);
    a0 = h.target.counters();
    sleep_until(t1);
    a1 = h.target.counters();
}

record in_process(harness& h, std::size_t n, contend_params p, std::int64_t t0, std::int64_t t1,
                  std::vector<grant>& grants) {
    client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(n + 8))};
    window w;
    {
        progress pr(h.ioc, "contend N=" + std::to_string(n), double(t1 - monotonic_ns()) / 1e9,
                    [&] { return grants.size(); });
        run_sync(h.ioc,
                 measure_window(h, c, t0, t1, w, [&] { return contend_core(c, p, grants); }));
    }
    record r;
    auto c_res = analyze(grants, n, t0, t1);
    fill_contention(r, c_res, w);
    return r;
}

record in_workers(harness& h, std::size_t n, std::size_t procs, contend_params p, std::int64_t t0,
                  std::int64_t t1, std::vector<grant>& grants) {
    std::vector<std::unique_ptr<child_process>> workers;
    std::size_t first = 0;
    for (std::size_t j = 0; j < procs; ++j) {
        const std::size_t count = n / procs + (j < n % procs ? 1 : 0);
        if (count == 0)
            continue;
        std::vector<std::string> argv{h.self_exe(),    "_contend-worker",
                                      "--address",     h.target.address(),
                                      "--prefix",      p.prefix,
                                      "--contenders",  std::to_string(count),
                                      "--first",       std::to_string(first),
                                      "--keys",        std::to_string(p.keys),
                                      "--start-ns",    std::to_string(p.start_ns),
                                      "--t0-ns",       std::to_string(t0),
                                      "--t1-ns",       std::to_string(t1),
                                      "--hold-us",     std::to_string(p.hold_us),
                                      "--connections", std::to_string(h.pool_size(count + 8))};
        if (p.fair)
            argv.push_back("--fair");
        if (h.opt.local_turn) {
            argv.push_back("--local-turn");
            argv.push_back(std::to_string(*h.opt.local_turn));
        }
        workers.push_back(std::make_unique<child_process>(piped(std::move(argv))));
        first += count;
    }
    std::optional<agent_counters> a0, a1;
    sample_window(h, t0, t1, a0, a1);
    double cpu_us = 0;
    std::string error;
    for (auto& w : workers) {
        for (std::string line; w->read_line(line);)
            if (auto cpu = parse_child_line(line, grants, &error))
                cpu_us += *cpu;
        if (shell_status(w->reap()) != 0 && error.empty())
            error = "a worker failed";
    }
    if (!error.empty())
        throw std::runtime_error("contend workers: " + error);
    record r;
    auto c_res = analyze(grants, n, t0, t1);
    std::optional<agent_counters> d;
    if (a0 && a1)
        d = a1->since(*a0);
    fill_contention(r, c_res, d, std::int64_t(cpu_us));
    return r;
}

} // namespace

record run_contend(harness& h, std::size_t n, std::size_t procs) {
    contend_params p;
    p.prefix = h.fresh_prefix("contend");
    p.contenders = n;
    p.keys = std::min(key_count(h), n);
    p.hold_us = h.opt.hold_us;
    p.fair = h.opt.fair;
    // Time to start worker processes and create sessions, then a tenth as warm-up.
    const std::int64_t setup =
        procs > 1 ? 1'500'000'000 : 200'000'000 + std::int64_t(n) * 1'000'000;
    p.start_ns = monotonic_ns() + setup;
    const std::int64_t t0 = p.start_ns + std::int64_t(h.opt.duration_s * 1e8);
    const std::int64_t t1 = t0 + std::int64_t(h.opt.duration_s * 1e9);
    p.end_ns = t1;

    std::vector<grant> grants;
    record body = procs > 1 ? in_workers(h, n, procs, p, t0, t1, grants)
                            : in_process(h, n, p, t0, t1, grants);
    record r = h.base_record("contend", "conclave", n);
    r.set("keys", double(p.keys));
    r.set("processes", double(procs));
    r.set("hold_us", double(p.hold_us));
    r.set("fair", p.fair && lock_has_fair_mode());
    for (const auto& [k, v] : body.fields())
        r.set(k, v);
    r.latencies_us = std::move(body.latencies_us);
    return r;
}

void judge_contend(harness& h, record& r) {
    const rtt_baseline& base = h.baseline();
    r.set("rtt_p99_us", base.p99_us);
    const double p99 = r.number("p99_us").value_or(0);
    if (base.p99_us > 0)
        r.set("handoff_p99_vs_rtt_p99", p99 / base.p99_us);
    if (r.number("contenders").value_or(0) < 2)
        return; // no one to hand over to
    bool met = p99 <= 3 * base.p99_us;
    if (auto a = r.number("acquire_attempts_per_handoff"))
        met = met && *a <= 2.0;
    if (auto q = r.number("requests_per_handoff"))
        met = met && *q <= 2.5;
    std::string target = "handoff p99<=3x rtt p99, attempts<=2, requests<=2.5";
    if (r.text("fair") == "true") {
        met = met && r.number("jain").value_or(0) >= 0.9;
        target += ", jain>=0.9";
    }
    r.set("target", target);
    r.set("target_met", met);
}

void scenario_contend(harness& h) {
    h.baseline();
    for (std::size_t n : contender_counts(h, {1, 4, 16, 64})) {
        record r = run_contend(h, n, std::min(h.opt.processes, n));
        judge_contend(h, r);
        h.out.add(std::move(r));
        if (key_count(h) == 1) // (golock contends on one key)
            run_go_beside(h, "contend", n);
    }
}

} // namespace conclave::bench
