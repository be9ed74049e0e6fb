// SPDX-License-Identifier: BSL-1.0
// The flags of `conclave lock`, declared in one place: the command parses them, and so does
// the fuzzer (fuzz/fuzz_cli_parse.cpp), exactly as the command does.
#pragma once

#include "cli/common/flags.hpp"
#include "cli/common/held_command.hpp"
#include "cli/lock/run.hpp"

#include <chrono>
#include <cstdint>

namespace conclave::cli {

/// What `conclave lock`'s flags set, as given (checked by the command afterwards).
struct lock_flags {
    std::int64_t limit = 1;         ///< -n
    std::int64_t monitor_retry = 3; ///< -monitor-retry
    std::chrono::nanoseconds timeout{0};
    bool shared = false, exclusive = false;
    lock_settings cfg; ///< -name, -child-exit-code and the held command's flags
    held_command_flags held;

    /// Declares every flag of the command in `flags`, each setting its field.
    void add_to(flag_set& flags);
};

} // namespace conclave::cli
