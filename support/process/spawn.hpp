// SPDX-License-Identifier: BSL-1.0
// The one way conclave's own programs start a child process: the CLI's `lock` and `elect`
// commands, the benchmark's workers, peers and agent, the tests' Consul servers and CLI
// runs. Each says what it needs in spawn_options; how a child is started is written once.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace conclave::programs {

struct spawn_options {
    std::vector<std::string> argv;      ///< argv[0]: a path, or a name looked up in PATH
    std::vector<std::string> extra_env; ///< "NAME=value", replacing inherited values
    bool stdin_null = true;             ///< stdin on /dev/null; otherwise ours
    /// When >= 0: the child's stdin is a duplicate of this descriptor (e.g. a memfd holding
    /// its input: any size, no pipe to feed), whatever stdin_null says.
    int stdin_fd = -1;
    bool stdout_pipe = false; ///< stdout to a pipe we read (child_process::read_line)
    std::string stdout_file;  ///< otherwise, when set: created or truncated
    std::string stderr_file;  ///< when set; may equal stdout_file (both go there)
    /// A process group of its own, so a signal to the group reaches everything the child
    /// started (`sh -c 'a; b'`, pipelines), not only the child.
    bool own_process_group = false;
    /// SIGKILL when the thread that started the child exits (PR_SET_PDEATHSIG), also when
    /// this process crashes or is killed: for tests, which must leave nothing running, and
    /// the CLI, whose child must not outlive its lock. (The signal is lost when the child
    /// execs a set-user-ID program.) child_process adds its process group (group_guard),
    /// killed when this process dies (not when the thread exits).
    bool die_with_parent = false;
    /// With own_process_group: a socket on which the child sends its process group id
    /// before it execs (set by child_process for its group_guard); -1: none.
    int group_guard_socket = -1;
};

struct spawned {
    pid_t pid = -1;
    int stdout_pipe = -1; ///< our end (close-on-exec), with spawn_options::stdout_pipe
};

/// Starts the child and returns once it runs the program. The child inherits descriptors
/// 0-2 only (Asio's sockets are not close-on-exec), starts with no signal blocked and
/// SIGINT, SIGTERM, SIGPIPE and SIGCHLD at their defaults. Throws std::system_error when it
/// cannot start, the program's exec error included (ENOENT for a command not found), and
/// std::invalid_argument for an empty argv.
spawned spawn(const spawn_options& options);

} // namespace conclave::programs
