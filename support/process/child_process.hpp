// SPDX-License-Identifier: BSL-1.0
// A child process we own: started by spawn, signalled, reaped, and never outlived by us
// without being killed. exit_wait.hpp waits for its exit; wait_status.hpp reads the result.
#pragma once

#include "process/group_guard.hpp"
#include "process/spawn.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <sys/types.h>

namespace conclave::programs {

class child_process {
public:
    /// Starts the child (see spawn; throws what it throws). With both die_with_parent and
    /// own_process_group, our death also kills its process group (group_guard).
    explicit child_process(const spawn_options& options);
    /// Kills (SIGKILL, its process group when it has one) and reaps a child not reaped
    /// yet, so no path leaves a process behind.
    ~child_process();
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;

    pid_t pid() const noexcept { return pid_; }

    /// Whether the child has exited, without reaping it: until reap(), its pid (and its
    /// process group) cannot be reused, so signal() cannot reach another process.
    bool exited() const noexcept;

    /// Sends `sig` to the child's process group (to the child alone when it has none).
    /// Does nothing once reaped.
    void signal(int sig) const noexcept;

    /// Waits for the exit (blocking) and returns the wait status; the same status again
    /// on later calls.
    int reap() noexcept;

    /// The next line the child wrote to its stdout (spawn_options::stdout_pipe), without
    /// its newline; false at the end of its output (or with no pipe).
    bool read_line(std::string& line);

private:
    pid_t pid_ = -1;
    bool own_group_ = false;
    bool reaped_ = false;
    int status_ = 0;
    std::FILE* stdout_ = nullptr;
    std::unique_ptr<group_guard> guard_;
};

} // namespace conclave::programs
