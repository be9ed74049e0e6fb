// SPDX-License-Identifier: BSL-1.0
#include "process/wait_status.hpp"

#include <cstring>
#include <sys/wait.h>

namespace conclave::programs {

int shell_status(int wait_status) noexcept {
    if (WIFEXITED(wait_status))
        return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status))
        return 128 + WTERMSIG(wait_status);
    return 1; // stopped or continued: reap() never returns those
}

std::string describe_wait_status(int wait_status) {
    if (WIFEXITED(wait_status))
        return "exit status " + std::to_string(WEXITSTATUS(wait_status));
    if (WIFSIGNALED(wait_status)) {
        const int sig = WTERMSIG(wait_status);
        return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
    }
    return "wait status " + std::to_string(wait_status);
}

} // namespace conclave::programs
