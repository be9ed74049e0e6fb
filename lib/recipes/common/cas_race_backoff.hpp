// SPDX-License-Identifier: BSL-1.0
// A randomized, growing pause between check-and-set attempts that lost a race.
#pragma once

#include <algorithm>
#include <chrono>
#include <random>

namespace conclave::detail {

/// After a lost CAS race (a semaphore's `.lock`, a fenced write): a random pause in [0, cap], cap
/// doubling from 1 ms to 32 ms. Why: every participant writes the same `.lock`; retrying at once in
/// lockstep lets the same few keep winning (seen in the benchmark: a release losing race after
/// race to a few acquirers).
class cas_race_backoff {
public:
    std::chrono::steady_clock::duration next() {
        std::uniform_int_distribution<long> pick{0, cap_us_};
        const auto d = std::chrono::microseconds{pick(rng_)};
        cap_us_ = std::min<long>(cap_us_ * 2, 32000);
        return d;
    }

private:
    long cap_us_ = 1000;
    std::minstd_rand rng_{std::random_device{}()};
};

} // namespace conclave::detail
