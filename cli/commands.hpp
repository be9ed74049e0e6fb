// Subcommands of the `conclave` executable. Each takes the arguments after its name and
// returns the process exit status.
#pragma once

#include <span>
#include <string_view>

namespace conclave::cli {

using args = std::span<const std::string_view>;

int agent_command(args a);

} // namespace conclave::cli
