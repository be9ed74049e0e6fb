// SPDX-License-Identifier: BSL-1.0
#include "cli/elect/restart_policy.hpp"

#include <algorithm>
#include <sys/wait.h>

namespace conclave::cli {

restart_policy::decision restart_policy::after_exit(int wait_status, duration ran) {
    decision d;
    d.failed = !(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
    if (!d.failed || ran >= healthy_run)
        failures_ = 0;
    if (!d.failed) {
        d.delay = std::max(duration::zero(), duration(min_interval) - ran);
        return d;
    }
    ++failures_;
    d.restart = failures_;
    d.give_up = max_restarts_ >= 0 && failures_ > max_restarts_;
    // 1 s << (failures - 1), without overflowing for a long run of failures.
    duration delay = first_delay;
    for (std::int64_t i = 1; i < failures_ && delay < max_delay; ++i)
        delay *= 2;
    d.delay = std::min(delay, duration(max_delay));
    return d;
}

} // namespace conclave::cli
