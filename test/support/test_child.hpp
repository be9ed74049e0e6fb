// SPDX-License-Identifier: BSL-1.0
// How tests start the processes they run (the conclave CLI, a real Consul): so that none
// outlives the test that started it.
#pragma once

#include "process/child_process.hpp"

#include <string>
#include <utility>
#include <vector>

namespace conclave::test {

/// A child that gets SIGKILL when the thread that starts it exits (PR_SET_PDEATHSIG): a test
/// that crashes or is killed leaves nothing running. Its stdin is /dev/null; `env`
/// ("NAME=value") is added to (and overrides) the test's; stdout and stderr go to the files
/// named (truncated; one file when both name it), to the test's own when empty.
inline programs::spawn_options test_child(std::vector<std::string> argv,
                                          std::vector<std::string> env = {},
                                          std::string stdout_file = {},
                                          std::string stderr_file = {}) {
    programs::spawn_options o;
    o.argv = std::move(argv);
    o.extra_env = std::move(env);
    o.stdout_file = std::move(stdout_file);
    o.stderr_file = std::move(stderr_file);
    o.die_with_parent = true;
    return o;
}

} // namespace conclave::test
