// SPDX-License-Identifier: BSL-1.0
// Starting the processes tests run (the conclave CLI, a real Consul) so that none outlives
// the test that started it.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace conclave::test {

struct child_spec {
    std::vector<std::string> argv; ///< argv[0] is the executable's path
    std::vector<std::string> env;  ///< "NAME=value", added to (and overriding) the test's
    std::string stdout_path;       ///< truncated and written; the test's own when empty
    std::string stderr_path;       ///< likewise; may equal stdout_path (both go there)
};

/// Starts the child with standard input on /dev/null and no other inherited descriptors.
/// It gets SIGKILL when the thread that called this exits (PR_SET_PDEATHSIG): a test that
/// crashes or is killed leaves nothing running. Throws std::runtime_error when it cannot
/// start; an exec failure shows as exit status 127.
pid_t spawn_child(const child_spec& spec);

} // namespace conclave::test
