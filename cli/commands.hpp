// SPDX-License-Identifier: BSL-1.0
// Subcommands of the `conclave` executable. Each takes the arguments after its name and
// returns the process exit status (exit_codes.hpp).
#pragma once

#include <span>
#include <string_view>

namespace conclave::cli {

using args = std::span<const std::string_view>;

int agent_command(args a);
int barrier_command(args a);
int counter_command(args a);
int elect_command(args a);
int group_command(args a);
int lock_command(args a);
int kv_command(args a);
int latch_command(args a);
int watch_command(args a);

} // namespace conclave::cli
