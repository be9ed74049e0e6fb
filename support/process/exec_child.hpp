// SPDX-License-Identifier: BSL-1.0
// The part of spawn that runs in the child, between fork and exec (internal to spawn.cpp).
// There, the child of a multi-threaded parent may only make async-signal-safe calls: no
// allocation, no locks. So everything it needs is prepared before fork, in a child_plan.
#pragma once

#include <sys/types.h>
#include <vector>

namespace conclave::programs {

struct child_plan {
    int stdio[3] = {-1, -1, -1}; ///< what becomes descriptor 0, 1, 2; -1: ours
    int report = -1; ///< the write end of a close-on-exec pipe: exec's error goes back on it
    bool own_process_group = false;
    int group_guard = -1; ///< where the child sends its process group id (group_guard.hpp)
    bool die_with_parent = false;
    pid_t parent = -1;
    std::vector<char*> paths; ///< where to exec the program, in order; null-terminated
    std::vector<char*> argv, envp;
};

/// Sets the child up as planned and execs the program. Never returns: on failure, the
/// error number goes to plan.report and the child exits with 127.
[[noreturn]] void exec_child(const child_plan& plan) noexcept;

} // namespace conclave::programs
