// SPDX-License-Identifier: BSL-1.0
// The benchmark's children (contend workers and the failover holder, which are this
// executable's hidden subcommands, the Python and Node peers, the agent) report on their
// stdout, which the benchmark reads line by line; their stdin and stderr are its own.
#pragma once

#include "process/child_process.hpp"
#include "process/wait_status.hpp"

#include <string>
#include <utility>
#include <vector>

namespace conclave::bench {

using programs::child_process;
using programs::shell_status;

/// argv[0]: a path, or a name looked up in PATH.
inline programs::spawn_options piped(std::vector<std::string> argv) {
    programs::spawn_options o;
    o.argv = std::move(argv);
    o.stdin_null = false;
    o.stdout_pipe = true;
    return o;
}

} // namespace conclave::bench
