// SPDX-License-Identifier: BSL-1.0
// Grants of a contended lock as every implementation logs them (ours in or out of process,
// the Python and Node peers), and what they say: handoff latency, waits, fairness.
#pragma once

#include "harness/report.hpp"
#include "harness/target.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace conclave::bench {

/// One acquisition: CLOCK_MONOTONIC ns of the acquire call, its ack, and the release ack
/// (0: not released).
struct grant {
    std::uint32_t contender = 0;
    std::uint32_t key = 0;
    std::int64_t start_ns = 0, acquired_ns = 0, released_ns = 0;
};

struct contention_result {
    std::size_t grants = 0;   ///< acquired inside the window
    std::size_t releases = 0; ///< released inside the window
    double ops_per_s = 0;
    std::vector<std::chrono::nanoseconds> handoffs; ///< release ack -> next acquire ack
    std::vector<std::chrono::nanoseconds> waits;    ///< acquire call -> ack
    double jain = 0;                                ///< over grants per contender
    double max_wait_us = 0;
};

/// Analyzes the grants acquired in [t0, t1) of `contenders` contenders.
contention_result analyze(std::vector<grant> grants, std::size_t contenders, std::int64_t t0,
                          std::int64_t t1);

/// Fills the common fields: ops_per_s, handoff percentiles (p50_us..max_us), waits, jain,
/// and per handoff requests and acquire attempts from the agent's counters.
void fill_contention(record& r, contention_result& c, const std::optional<agent_counters>& d,
                     std::int64_t cpu_us);
/// Sets client_requests_per_op: the client's own requests in the window (renewals and
/// monitors included) per grant. Any Consul has it; the agent's counters need a dev agent.
void set_client_requests(record& r, std::uint64_t requests);

/// A child's JSON line {"grant":[c,k,start,acquired,released]} or {"summary":{...}}.
/// Appends grants; returns the summary's cpu_us when the line is a summary.
std::optional<double> parse_child_line(const std::string& line, std::vector<grant>& out,
                                       std::string* error);

std::string grant_line(const grant& g);

} // namespace conclave::bench
