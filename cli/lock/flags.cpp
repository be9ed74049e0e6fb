// SPDX-License-Identifier: BSL-1.0
#include "cli/lock/flags.hpp"

namespace conclave::cli {

void lock_flags::add_to(flag_set& flags) {
    flags.add_int("n", &limit);
    flags.add_bool("shared", &shared);
    flags.add_bool("exclusive", &exclusive);
    flags.add_duration("timeout", &timeout);
    flags.add_duration("try", &timeout);
    flags.add_int("monitor-retry", &monitor_retry);
    flags.add_string("name", &cfg.session_name);
    flags.add_bool("child-exit-code", &cfg.child_exit_code);
    held.add_to(flags, cfg);
}

} // namespace conclave::cli
