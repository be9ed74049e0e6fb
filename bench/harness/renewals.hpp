// SPDX-License-Identifier: BSL-1.0
// Session renewals as the library reports them (conclave::observer): every bench client
// reports to one recorder, and each scenario's renewals become a record of their own.
#pragma once

#include <conclave/observer.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

namespace conclave::bench {

class renew_recorder : public observer {
public:
    void session_renewed(const renew_event& e) override {
        if (e.error)
            ++failures;
        else
            durations.push_back(e.duration);
    }

    /// Renewals that succeeded since the last clear(), and their time.
    std::vector<std::chrono::nanoseconds> durations;
    std::uint64_t failures = 0;

    void clear() {
        durations.clear();
        failures = 0;
    }
};

} // namespace conclave::bench
