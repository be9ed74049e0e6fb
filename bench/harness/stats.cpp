// SPDX-License-Identifier: BSL-1.0
#include "harness/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <malloc.h>
#include <numeric>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

namespace conclave::bench {

summary summarize(std::vector<std::chrono::nanoseconds>& samples) {
    summary s;
    s.count = samples.size();
    if (samples.empty())
        return s;
    std::sort(samples.begin(), samples.end());
    auto at = [&](double q) {
        const auto rank = static_cast<std::size_t>(std::ceil(q * double(samples.size())));
        const auto idx = std::min(samples.size() - 1, rank == 0 ? 0 : rank - 1);
        return double(samples[idx].count()) / 1000.0;
    };
    s.p50_us = at(0.50);
    s.p90_us = at(0.90);
    s.p99_us = at(0.99);
    s.p999_us = at(0.999);
    s.max_us = double(samples.back().count()) / 1000.0;
    const auto total = std::accumulate(samples.begin(), samples.end(), std::chrono::nanoseconds{0});
    s.mean_us = double(total.count()) / 1000.0 / double(samples.size());
    return s;
}

double jain_index(const std::vector<double>& shares) {
    double sum = 0, squares = 0;
    for (double x : shares) {
        sum += x;
        squares += x * x;
    }
    if (shares.empty() || squares == 0)
        return 0;
    return sum * sum / (double(shares.size()) * squares);
}

std::chrono::microseconds process_cpu_time() {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    const auto us = [](const timeval& tv) {
        return std::int64_t(tv.tv_sec) * 1000000 + std::int64_t(tv.tv_usec);
    };
    return std::chrono::microseconds{us(ru.ru_utime) + us(ru.ru_stime)};
}

std::size_t resident_bytes() {
    unsigned long size = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

std::size_t heap_in_use_bytes() {
    const struct mallinfo2 mi = ::mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

std::int64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

} // namespace conclave::bench
