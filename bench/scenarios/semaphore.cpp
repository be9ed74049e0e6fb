// SPDX-License-Identifier: BSL-1.0
// semaphore: N contenders on one semaphore of limit L, each acquiring a permit, holding it
// for --hold-us and releasing it, in a loop. Latency is the acquire (call -> permit).
#include "harness/scenarios.hpp"
#include "peers/go_peer.hpp"

#include <conclave/semaphore.hpp>

namespace conclave::bench {

namespace {

struct sem_run {
    std::string prefix;
    std::uint32_t limit = 1;
    std::int64_t start_ns = 0, t0 = 0, t1 = 0;
    long hold_us = 0;
    std::vector<grant> grants;
    std::vector<session> sessions;
};

asio::awaitable<void> sem_contender(client c, sem_run& run, std::size_t i) {
    semaphore sem{c, run.prefix, run.limit};
    co_await sleep_until_ns(run.start_ns);
    while (monotonic_ns() < run.t1) {
        grant g;
        g.contender = std::uint32_t(i);
        g.start_ns = monotonic_ns();
        const auto budget = std::chrono::milliseconds((run.t1 - g.start_ns) / 1'000'000 + 20000);
        auto [ec, permit] = co_await sem.async_try_acquire(run.sessions[i], budget, use_tuple);
        if (ec)
            throw boost::system::system_error(ec, "semaphore acquire");
        if (!permit)
            throw std::runtime_error("semaphore: no permit within the run + 20 s");
        g.acquired_ns = monotonic_ns();
        co_await sleep_for_us(run.hold_us);
        auto [rec] = co_await permit->async_release(use_tuple);
        if (rec)
            throw boost::system::system_error(rec, "semaphore release");
        g.released_ns = monotonic_ns();
        run.grants.push_back(g);
    }
}

void semaphore_run(harness& h, std::size_t n) {
    client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(n + 8))};
    sem_run run;
    run.prefix = h.fresh_prefix("semaphore");
    run.limit = std::uint32_t(h.opt.limit);
    run.hold_us = h.opt.hold_us;
    run.sessions.resize(n);
    const auto times = run_times::plan(h, n);
    run.start_ns = times.start_ns;
    run.t0 = times.t0;
    run.t1 = times.t1;
    window w;
    run_with_sessions(
        h, c, times, run.sessions, "bench-semaphore", "semaphore",
        "semaphore N=" + std::to_string(n), [&] { return run.grants.size(); },
        [&](std::size_t i) { return sem_contender(c, run, i); }, w);

    auto res = analyze(run.grants, n, run.t0, run.t1);
    record r = h.base_record("semaphore", "conclave", n);
    r.set("limit", double(run.limit));
    r.set("hold_us", double(run.hold_us));
    const auto d = fill_contention(r, res, w);
    // A permit takes several writes by design (contender key, CAS on .lock, release
    // CAS, key delete): report writes per permit rather than "acquire attempts".
    report_writes_per_grant(r, d, res.grants);
    // With L holders at once there is no single "previous holder": the latency that
    // means something is the wait for a permit.
    r.latencies_us.clear();
    const auto waits = add_latencies(r, res.waits);
    r.set("latency", std::string("acquire"));
    set_percentiles(r, waits);
    h.out.add(std::move(r));
}

} // namespace

void scenario_semaphore(harness& h) {
    for (std::size_t n : contender_counts(h, {1, 4, 16, 64})) {
        // A failed N is reported and the next one still runs.
        try {
            semaphore_run(h, n);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "conclave-bench: semaphore N=%zu failed: %s\n", n, e.what());
            record r = h.base_record("semaphore", "conclave", n);
            r.set("limit", double(h.opt.limit));
            r.set("error", std::string(e.what()));
            h.out.add(std::move(r));
        }
        run_go_beside(h, "semaphore", n);
    }
}

} // namespace conclave::bench
