// SPDX-License-Identifier: BSL-1.0
// semaphore: N contenders on one semaphore of limit L, each acquiring a permit, holding it
// for --hold-us and releasing it, in a loop. Latency is the acquire (call -> permit). With
// --processes P the contenders are spread over P clients, each with its pool and its queue
// of local waiters as a process of its own would have; --fair uses the fair mode; --slots S
// makes each acquire take S slots at once.
#include "harness/scenarios.hpp"
#include "peers/go_peer.hpp"

#include <conclave/semaphore.hpp>

#include <algorithm>

namespace conclave::bench {

namespace {

struct sem_run : contender_run {
    std::string prefix;
    std::uint32_t limit = 1;
    std::uint32_t slots = 1;
    bool fair = false;
    std::vector<client> clients; ///< contender i uses clients[i % clients.size()]
    std::vector<grant> grants;
};

asio::awaitable<void> sem_contender(sem_run& run, std::size_t i) {
    semaphore sem{run.clients[i % run.clients.size()], run.prefix, run.limit,
                  semaphore_options{}.with_fair(run.fair)};
    co_await sleep_until_ns(run.start_ns);
    while (monotonic_ns() < run.t1) {
        grant g;
        g.contender = std::uint32_t(i);
        g.start_ns = monotonic_ns();
        auto got = co_await sem.async_try_acquire(run.sessions[i], run.slots,
                                                  acquire_budget(run.t1), use_tuple);
        auto permit = granted(std::move(got), "semaphore acquire");
        co_await hold_and_release(permit, run.hold_us, g, "semaphore release");
        run.grants.push_back(g);
    }
}

void semaphore_run(harness& h, std::size_t n) {
    client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(n + 8))};
    sem_run run;
    run.prefix = h.fresh_prefix("semaphore");
    run.limit = std::uint32_t(h.opt.limit);
    run.fair = h.opt.fair;
    run.slots = std::uint32_t(h.opt.slots);
    const std::size_t processes = std::max<std::size_t>(1, h.opt.processes);
    run.clients.push_back(c);
    for (std::size_t i = 1; i < processes; ++i)
        run.clients.emplace_back(h.ioc.get_executor(),
                                 h.target.make_config(h.pool_size(n / processes + 8)));
    run.plan(h, n);
    window w;
    run_with_sessions(
        h, c, run, "bench-semaphore", "semaphore", "semaphore N=" + std::to_string(n),
        [&] { return run.grants.size(); }, [&](std::size_t i) { return sem_contender(run, i); }, w);

    auto res = analyze(run.grants, n, run.t0, run.t1);
    record r = h.base_record("semaphore", "conclave", n);
    r.set("limit", double(run.limit));
    r.set("hold_us", double(run.hold_us));
    r.set("fair", std::string(run.fair ? "yes" : "no"));
    r.set("slots", double(run.slots));
    r.set("processes", double(processes));
    // Fairness across processes: grants per process (Jain's index over the processes).
    std::vector<double> per_process(processes, 0.0);
    for (const auto& g : run.grants)
        if (g.acquired_ns >= run.t0 && g.acquired_ns < run.t1)
            per_process[g.contender % processes] += 1;
    r.set("jain_processes", jain_index(per_process));
    const auto d = fill_contention(r, res, w);
    // A permit takes several writes by design (contender key, CAS on .lock, release
    // CAS, key delete): report writes per permit rather than "acquire attempts".
    report_writes_per_grant(r, d, res.grants);
    // With L holders at once there is no single "previous holder": the latency that
    // means something is the wait for a permit.
    report_acquire_waits(r, res.waits);
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
        if (h.opt.slots == 1) // (Go's api.Semaphore takes one slot per acquire)
            run_go_beside(h, "semaphore", n);
    }
}

} // namespace conclave::bench
