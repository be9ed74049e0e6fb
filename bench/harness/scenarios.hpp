// SPDX-License-Identifier: BSL-1.0
// One function per scenario; each appends its records to the harness's report.
#pragma once

#include "harness/contention.hpp"
#include "harness/harness.hpp"
#include "harness/stats.hpp"
#include "harness/window.hpp"

#include <conclave/client.hpp>
#include <conclave/lock.hpp>

namespace conclave::bench {

/// Sequential GETs of one key on `connections` connections for `seconds`.
record measure_rtt(harness& h, std::size_t connections, double seconds);

void scenario_rtt(harness& h);
void scenario_write(harness& h);
void scenario_cycle(harness& h);
void scenario_contend(harness& h);
void scenario_semaphore(harness& h);
void scenario_failover(harness& h);
void scenario_handover(harness& h);
void scenario_drain(harness& h);
void scenario_watch(harness& h);
void scenario_scale(harness& h);
void scenario_keys(harness& h);
void scenario_peers(harness& h);
void scenario_multilock(harness& h);
void scenario_rwlock(harness& h);

/// Hidden subcommands (`conclave-bench _contend-worker ...`, `_holder ...`): the bench
/// spawns itself for P-process contention and for a holder it can SIGKILL.
int worker_main(int argc, char** argv);

/// Lock options for the bench: fair mode when asked and when the library has it, and the
/// local turn set by set_local_turn.
lock_options bench_lock_options(bool fair);
/// --local-turn, for every lock of this process (the main one and its workers).
void set_local_turn(std::optional<unsigned> grants);
/// Whether this build's lock_options has a fair mode.
bool lock_has_fair_mode();

/// N contenders (ids first_id..) on keys (id % keys), each with its own session and lock
/// object on one shared client: acquire, hold, release, from start_ns until end_ns.
struct contend_params {
    std::string prefix;
    std::size_t contenders = 1;
    std::size_t first_id = 0;
    std::size_t keys = 1;
    std::int64_t start_ns = 0, end_ns = 0;
    long hold_us = 0;
    bool fair = false;
    bool once = false; ///< drain: each contender takes the lock once
    /// Called when every contender ended, before the sessions are destroyed.
    std::function<void()> before_cleanup;
};
asio::awaitable<void> contend_core(client c, const contend_params& p, std::vector<grant>& out);

/// One contend run of n contenders over `processes` processes (1: this one).
record run_contend(harness& h, std::size_t n, std::size_t processes);
/// Sets the contend targets (target, target_met) on a contend-like record.
void judge_contend(harness& h, record& r);

/// The contenders' default N list for a scenario.
std::vector<std::size_t> contender_counts(const harness& h, std::vector<std::size_t> fallback);
/// The keys contend and peers spread their contenders over: --keys, else 1.
std::size_t key_count(const harness& h);

} // namespace conclave::bench
