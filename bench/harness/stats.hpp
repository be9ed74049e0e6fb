// SPDX-License-Identifier: BSL-1.0
// Latency samples and their percentiles; fairness; process CPU and memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace conclave::bench {

struct summary {
    std::size_t count = 0;
    double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0, mean_us = 0;
};

/// Percentiles by nearest rank over the samples (sorted in place).
summary summarize(std::vector<std::chrono::nanoseconds>& samples);

/// Jain's fairness index of the shares: 1 when all are equal, 1/n when one gets everything.
double jain_index(const std::vector<double>& shares);

/// CPU time (user + system) this process has used so far.
std::chrono::microseconds process_cpu_time();

/// Resident set size of this process, in bytes (/proc/self/statm).
std::size_t resident_bytes();

/// Bytes handed out by malloc and not freed (glibc mallinfo2): finer than RSS.
std::size_t heap_in_use_bytes();

/// CLOCK_MONOTONIC in nanoseconds: steady_clock here, time.monotonic_ns() in Python and
/// process.hrtime.bigint() in Node read the same clock, so peers' timestamps compare.
std::int64_t monotonic_ns();

} // namespace conclave::bench
