// SPDX-License-Identifier: BSL-1.0
// The flags of `conclave elect`, declared in one place: the command parses them, and so does
// the fuzzer (fuzz/fuzz_cli_parse.cpp), exactly as the command does.
#pragma once

#include "cli/common/flags.hpp"
#include "cli/common/held_command.hpp"
#include "cli/elect/run.hpp"

namespace conclave::cli {

/// What `conclave elect`'s flags set, as given (checked by the command afterwards).
struct elect_flags {
    elect_settings cfg; ///< -name, -once, -max-restarts and the held command's flags
    held_command_flags held;
    bool leader_only = false; ///< -leader

    /// Declares every flag of the command in `flags`, each setting its field.
    void add_to(flag_set& flags);
};

} // namespace conclave::cli
