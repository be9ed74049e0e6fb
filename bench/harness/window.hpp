// SPDX-License-Identifier: BSL-1.0
// What the scenarios share around a measured run: the window's readings (CPU, the client's
// requests, the agent's counters) taken at its start and end, the latency samples a record
// keeps, the raw requests they are judged against, and the bench's sessions.
#pragma once

#include "harness/contention.hpp"
#include "harness/harness.hpp"

#include <conclave/client.hpp>
#include <conclave/grant.hpp>
#include <conclave/session.hpp>

#include <boost/system/system_error.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace conclave::bench {

/// One reading of what a window is judged by: this process's CPU, the client's requests,
/// and the agent's counters (a dev agent's; none on Consul).
struct window_reading {
    std::int64_t cpu_us = 0;
    std::uint64_t requests = 0;
    std::optional<agent_counters> agent;

    /// Reads them now, in that order.
    static window_reading now(harness& h, const client& c);
    /// Reads the CPU and the client's requests only.
    static window_reading now(const client& c);
};

/// The readings at the start and at the end of a measured window.
struct window {
    window_reading start, end;

    std::int64_t cpu_us() const { return end.cpu_us - start.cpu_us; }
    std::uint64_t requests() const { return end.requests - start.requests; }
    /// The agent's counters over the window, when it has them.
    std::optional<agent_counters> agent() const;
};

/// Runs `work` and, beside it, reads `w` at t0 and at t1 (both run to their end).
asio::awaitable<void> measure_window(harness& h, client c, std::int64_t t0, std::int64_t t1,
                                     window& w, std::function<asio::awaitable<void>()> work);
/// The same without the agent's counters (a worker process has no target).
asio::awaitable<void> measure_window(client c, std::int64_t t0, std::int64_t t1, window& w,
                                     std::function<asio::awaitable<void>()> work);

/// A contention record's shared fields from its grants and its window (fill_contention and
/// set_client_requests); returns the agent's counters over the window.
std::optional<agent_counters> fill_contention(record& r, contention_result& res, const window& w);

/// For a recipe whose grants take several writes by design (a semaphore's permit, a
/// multi-lock, a read-write lock) and have no single "previous holder": drops the handoff
/// fields fill_contention set, and reports the agent's KV writes per grant instead (when it
/// counts them).
void report_writes_per_grant(record& r, const std::optional<agent_counters>& d, std::size_t grants);

/// Appends the samples to `r.latencies_us` (µs, sorted, for the plots) and returns their
/// percentiles.
summary add_latencies(record& r, std::vector<std::chrono::nanoseconds>& samples);

/// For a recipe with no single "previous holder" (L holders at once, or a set of keys): the
/// latency that means something is the wait for a grant. Replaces `r`'s latencies with
/// `waits` and its percentiles with theirs.
void report_acquire_waits(record& r, std::vector<std::chrono::nanoseconds>& waits);

/// The bench's sessions: named, with no lock-delay.
session_config bench_session_config(const char* name);
/// One raw write: a transaction with one KV lock operation on `key` for `session` (the
/// write floor, bench/scenarios/write.cpp). Throws when Consul does not commit it.
asio::awaitable<void> raw_lock_write(client& c, const std::string& key, const std::string& session);

/// How long a handoff scenario lets every process idle before it measures (long enough for
/// a waiter to be parked in its blocking query).
constexpr std::int64_t idle_settle_us = 200'000;
/// One GET of `key`, timed after idle_settle_us of idleness: the yardstick of a handoff,
/// which starts from idle too (failover, handover).
asio::awaitable<std::int64_t> idle_round_trip(client c, std::string key);

/// Creates a session of `cfg` and renews it from now on; throws `what: session create` when
/// it cannot be created.
asio::awaitable<session> start_session(client c, session_config cfg, const char* what);
/// The same with bench_session_config(name).
asio::awaitable<session> start_session(client c, const char* name, const char* what);

/// What every run of N contenders with a session each has (a scenario's run state derives
/// from it): when it starts and what it measures (CLOCK_MONOTONIC ns; the contenders start
/// together at start_ns, once their sessions exist, warm up for a tenth of the duration,
/// and are measured from t0 to t1), how long each grant is held, and the sessions.
struct contender_run {
    std::int64_t start_ns = 0, t0 = 0, t1 = 0;
    long hold_us = 0;
    std::vector<session> sessions;
    /// Sets the times of a run of `n` contenders from now, the hold time (--hold-us), and
    /// room for `n` sessions.
    void plan(const harness& h, std::size_t n);
};

/// The budget of an acquire that starts now in a run that ends at `end_ns`: the rest of the
/// run and 20 s more, so that a stuck run ends, and says so.
std::chrono::milliseconds acquire_budget(std::int64_t end_ns);

/// What a try-acquire with use_tuple completed with: the grant, or an exception that names
/// `what` (the error, or no grant within acquire_budget).
template <class Grant>
Grant granted(std::tuple<error_code, std::optional<Grant>> r, const std::string& what) {
    auto& [ec, grant] = r;
    if (ec)
        throw boost::system::system_error(ec, what);
    if (!grant)
        throw std::runtime_error(what + ": not acquired within the run + 20 s");
    return std::move(*grant);
}

/// Holds `held` for `hold_us`, then releases it: `g`'s acquired and released times are
/// stamped around. Throws, naming `what`, when the release fails.
asio::awaitable<void> hold_and_release(conclave::grant held, long hold_us, grant& g,
                                       const char* what);

/// One run of `run.sessions.size()` contenders in this process: a session each
/// (start_session with `name` and `what`), then `contender(i)` for all of them at once, with
/// `w` read at t0 and t1; the sessions are destroyed after, however the run ends, and its failure
/// is rethrown then. `label` and `done()` (grants so far) feed the progress line.
void run_with_sessions(harness& h, client& c, contender_run& run, const char* name,
                       const char* what, const std::string& label,
                       std::function<std::size_t()> done,
                       std::function<asio::awaitable<void>(std::size_t)> contender, window& w);

} // namespace conclave::bench
