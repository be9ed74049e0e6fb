// SPDX-License-Identifier: BSL-1.0
// rwlock: R readers and W writers, each with its own session, on one key: acquire (read or
// write), hold for --hold-us, release, in a loop. Either with a read_write_lock (readers
// hold together, a writer alone, in arrival order), or as a user would without one: every
// participant, reader or writer, takes a plain conclave::lock on the key. Two parts:
//  - read rate: R readers (default 8) beside W writers (--writers, default 0, 1 and 8);
//  - writer's wait: R readers (default 64) beside one writer; its acquire latency shows
//    whether readers that keep coming hold it off.
// Latency is the acquire (call -> grant): the readers' in the first part, the writer's in
// the second. Both are in every record (read_wait_*, writer_wait_*).
#include "harness/scenarios.hpp"

#include <conclave/read_write_lock.hpp>

#include <algorithm>
#include <cstdio>

namespace conclave::bench {

namespace {

/// One grant as the loop saw it: acquire call, its ack, the release call and its ack. The
/// client-side hold [acquired, release call] lies inside the hold Consul saw.
struct rw_grant {
    std::uint32_t who = 0; ///< participant: readers 0..R-1, then writers
    bool write = false;
    std::int64_t start_ns = 0, acquired_ns = 0, release_call_ns = 0, released_ns = 0;
};

struct rw_run : contender_run {
    bool rw = true; ///< a read_write_lock; else a plain lock for everyone
    std::string key;
    std::size_t readers = 0, writers = 0;
    bool fair = false;
    std::vector<rw_grant> grants;
};

const char* variant(bool rw) {
    return rw ? "read_write_lock" : "plain-lock";
}

struct part_spec {
    part_spec(const char* n, std::size_t r, std::size_t w)
        : name(n)
        , readers(r)
        , writers(w) {}
    const char* name; ///< "read-rate" or "writer-wait"
    std::size_t readers, writers;
};

asio::awaitable<conclave::grant> take_rw(read_write_lock& l, session& s, bool write,
                                         std::chrono::milliseconds budget) {
    std::tuple<error_code, std::optional<read_write_lease>> got;
    if (write)
        got = co_await l.async_try_acquire_write(s, budget, use_tuple);
    else
        got = co_await l.async_try_acquire_read(s, budget, use_tuple);
    auto lease = granted(std::move(got),
                         write ? "read_write_lock acquire write" : "read_write_lock acquire read");
    if (lease.writing() != write)
        throw std::runtime_error("read_write_lock: a grant of the wrong mode");
    co_return lease;
}

asio::awaitable<conclave::grant> take_plain(lock& l, session& s, std::chrono::milliseconds budget) {
    auto got = co_await l.async_try_acquire(s, budget, use_tuple);
    co_return granted(std::move(got), "plain lock acquire");
}

asio::awaitable<void> rw_participant(client c, rw_run& run, std::size_t i) {
    session& s = run.sessions[i];
    const bool write = i >= run.readers;
    std::optional<read_write_lock> rw;
    std::optional<lock> plain;
    if (run.rw)
        rw.emplace(c, run.key, read_write_lock_options{});
    else
        plain.emplace(c, run.key, bench_lock_options(run.fair));
    co_await sleep_until_ns(run.start_ns);
    while (monotonic_ns() < run.t1) {
        rw_grant g;
        g.who = std::uint32_t(i);
        g.write = write;
        g.start_ns = monotonic_ns();
        const auto budget = acquire_budget(run.t1);
        conclave::grant held;
        if (rw)
            held = co_await take_rw(*rw, s, write, budget);
        else
            held = co_await take_plain(*plain, s, budget);
        g.acquired_ns = monotonic_ns();
        co_await sleep_for_us(run.hold_us);
        g.release_call_ns = monotonic_ns();
        auto [rec] = co_await held.async_release(use_tuple);
        if (rec)
            throw boost::system::system_error(rec, "rwlock release");
        g.released_ns = monotonic_ns();
        run.grants.push_back(g);
    }
}

/// The grants of readers (write false) or writers, as the shared analysis takes them.
std::vector<grant> of_kind(const rw_run& run, bool write) {
    std::vector<grant> out;
    for (const auto& g : run.grants)
        if (g.write == write) {
            grant x;
            x.contender = write ? g.who - std::uint32_t(run.readers) : g.who;
            x.start_ns = g.start_ns;
            x.acquired_ns = g.acquired_ns;
            x.released_ns = g.released_ns;
            out.push_back(x);
        }
    return out;
}

/// Over the client-side holds inside [t0, t1): the most readers holding at once, and the
/// holds that broke the lock's rule (a writer beside anyone; with a plain lock, anyone
/// beside anyone).
struct overlap_result {
    std::size_t max_readers_together = 0;
    std::size_t violations = 0;
};

overlap_result overlaps(const rw_run& run) {
    struct event {
        std::int64_t t;
        bool start;
        bool write;
    };
    std::vector<event> events;
    for (const auto& g : run.grants) {
        if (g.release_call_ns < run.t0 || g.acquired_ns >= run.t1)
            continue;
        events.push_back({g.acquired_ns, true, g.write});
        events.push_back({g.release_call_ns, false, g.write});
    }
    // Ends before starts at the same instant.
    std::sort(events.begin(), events.end(), [](const event& a, const event& b) {
        return a.t != b.t ? a.t < b.t : (!a.start && b.start);
    });
    overlap_result r;
    std::size_t readers = 0, writers = 0;
    for (const auto& e : events) {
        if (!e.start) {
            --(e.write ? writers : readers);
            continue;
        }
        const bool clash = (e.write || !run.rw) ? readers + writers > 0 : writers > 0;
        if (clash)
            ++r.violations;
        ++(e.write ? writers : readers);
        r.max_readers_together = std::max(r.max_readers_together, readers);
    }
    return r;
}

void rwlock_run(harness& h, const part_spec& part, bool rw) {
    const std::size_t n = part.readers + part.writers;
    client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(n + 8))};
    rw_run run;
    run.rw = rw;
    run.key = h.fresh_prefix("rwlock") + "/key";
    run.readers = part.readers;
    run.writers = part.writers;
    run.fair = h.opt.fair;
    run.plan(h, n);
    window w;
    run_with_sessions(
        h, c, run, "bench-rwlock", "rwlock",
        std::string("rwlock ") + part.name + " " + variant(rw) +
            " R=" + std::to_string(part.readers) + " W=" + std::to_string(part.writers),
        [&] { return run.grants.size(); }, [&](std::size_t i) { return rw_participant(c, run, i); },
        w);

    // Every grant, reads and writes: the per-grant costs (CPU, requests).
    std::vector<grant> every;
    for (bool write : {false, true})
        for (const auto& g : of_kind(run, write)) {
            every.push_back(g);
            if (write)
                every.back().contender += std::uint32_t(run.readers);
        }
    auto all = analyze(every, n, run.t0, run.t1);
    auto reads = analyze(of_kind(run, false), run.readers, run.t0, run.t1);
    auto writes = analyze(of_kind(run, true), run.writers, run.t0, run.t1);

    record r = h.base_record("rwlock", "conclave", run.readers);
    r.set("variant", std::string(variant(rw)));
    r.set("part", std::string(part.name));
    r.set("readers", double(run.readers));
    r.set("writers", double(run.writers));
    r.set("hold_us", double(run.hold_us));
    const auto d = fill_contention(r, all, w);
    // Readers hold together: "the previous holder" means nothing here, and a grant's writes
    // differ by kind. Report writes per grant rather than handoffs and acquire attempts.
    report_writes_per_grant(r, d, all.grants);
    r.erase("wait_p50_us");
    r.erase("wait_p99_us");
    r.set("grants_per_s", all.ops_per_s);
    // The read rate is the headline; CPU and requests above are per grant of either kind.
    r.set("ops", double(reads.grants));
    r.set("ops_per_s", reads.ops_per_s);
    r.set("jain", reads.jain);
    r.set("writer_ops_per_s", writes.ops_per_s);
    if (run.writers > 1)
        r.set("writer_jain", writes.jain);
    const auto ov = overlaps(run);
    r.set("max_readers_together", double(ov.max_readers_together));
    r.set("exclusion_violations", double(ov.violations));

    r.latencies_us.clear();
    auto read_waits = summarize(reads.waits);
    r.set("read_wait_p50_us", read_waits.p50_us);
    r.set("read_wait_p99_us", read_waits.p99_us);
    r.set("read_wait_max_us", read_waits.max_us);
    if (run.writers) {
        auto write_waits = summarize(writes.waits);
        r.set("writer_wait_p50_us", write_waits.p50_us);
        r.set("writer_wait_p99_us", write_waits.p99_us);
        r.set("writer_wait_max_us", write_waits.max_us);
    }
    const bool writer_part = std::string(part.name) == "writer-wait";
    const auto headline = add_latencies(r, writer_part ? writes.waits : reads.waits);
    r.set("latency", std::string(writer_part ? "write acquire" : "read acquire"));
    set_percentiles(r, headline);
    r.set("max_wait_us", headline.max_us);
    h.out.add(std::move(r));
}

std::vector<std::size_t> writer_counts(const harness& h) {
    return h.opt.writers.empty() ? std::vector<std::size_t>{0, 1, 8} : h.opt.writers;
}

} // namespace

void scenario_rwlock(harness& h) {
    std::vector<part_spec> parts;
    for (std::size_t readers : contender_counts(h, {8}))
        for (std::size_t writers : writer_counts(h))
            parts.emplace_back("read-rate", readers, writers);
    for (std::size_t readers : contender_counts(h, {64}))
        parts.emplace_back("writer-wait", readers, 1);
    for (const auto& part : parts)
        for (bool rw : {true, false}) {
            // A failed run is reported and the next one still runs.
            try {
                rwlock_run(h, part, rw);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "conclave-bench: rwlock %s %s R=%zu W=%zu failed: %s\n",
                             part.name, variant(rw), part.readers, part.writers, e.what());
                record r = h.base_record("rwlock", "conclave", part.readers);
                r.set("variant", std::string(variant(rw)));
                r.set("part", std::string(part.name));
                r.set("readers", double(part.readers));
                r.set("writers", double(part.writers));
                r.set("error", std::string(e.what()));
                h.out.add(std::move(r));
            }
        }
}

} // namespace conclave::bench
