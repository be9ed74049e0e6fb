// SPDX-License-Identifier: BSL-1.0
// When `conclave elect` runs its command again after a term the command ended by itself:
// a command that keeps failing is restarted less and less often (and, with -max-restarts,
// given up on); one that succeeds is restarted at most once a second.
#pragma once

#include <chrono>
#include <cstdint>

namespace conclave::cli {

class restart_policy {
public:
    using duration = std::chrono::steady_clock::duration;

    /// Starts of the command are at least this far apart, so a command that exits at once
    /// does not spin.
    static constexpr std::chrono::seconds min_interval{1};
    /// The first delay after a failure, doubled by each further one up to max_delay.
    static constexpr std::chrono::seconds first_delay{1};
    static constexpr std::chrono::seconds max_delay{60};
    /// A command that ran this long before failing is not in a crash loop: its failure
    /// counts as the first again.
    static constexpr std::chrono::seconds healthy_run{60};

    /// `max_restarts` < 0: no limit.
    explicit restart_policy(std::int64_t max_restarts)
        : max_restarts_(max_restarts) {}

    struct decision {
        bool failed = false;      ///< non-zero exit, or killed by a signal
        bool give_up = false;     ///< failed once more than -max-restarts allows in a row
        std::int64_t restart = 0; ///< failed: the how-manieth restart in a row this is
        duration delay{};         ///< before campaigning again
    };

    /// After the command ended by itself with `wait_status`, having run for `ran`.
    decision after_exit(int wait_status, duration ran);

    std::int64_t max_restarts() const noexcept { return max_restarts_; }

private:
    std::int64_t max_restarts_;
    std::int64_t failures_ = 0; ///< in a row
};

} // namespace conclave::cli
