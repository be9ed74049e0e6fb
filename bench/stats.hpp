// Latency samples and their percentiles.
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

/// CPU time (user + system) this process has used so far.
std::chrono::microseconds process_cpu_time();

} // namespace conclave::bench
