// SPDX-License-Identifier: BSL-1.0
// What a child's wait status (child_process::reap) says, as a number and in words.
#pragma once

#include <string>

namespace conclave::programs {

/// The status a shell reports for the child: its exit status, or 128 + the signal that
/// killed it.
int shell_status(int wait_status) noexcept;

/// "exit status 3", "killed by signal 15 (Terminated)".
std::string describe_wait_status(int wait_status);

} // namespace conclave::programs
