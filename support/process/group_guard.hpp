// SPDX-License-Identifier: BSL-1.0
// Kills a child's process group when the process that started it dies without reaping it
// (SIGKILL, a crash): PR_SET_PDEATHSIG only reaches the child itself, not what it started
// (`sh -c 'a; b'`, pipelines, background jobs). Used by child_process for children that
// die with their parent and have a process group of their own.
#pragma once

#include <sys/types.h>

namespace conclave::programs {

/// A watcher process, forked before the child, that waits on a socket only we and the child
/// (until its exec) hold. The child sends its process group id on it first thing after
/// setpgid(), before it can start anything (child_socket()); when the socket then ends
/// without dismiss() (we are gone: the kernel closed our end), the watcher sends SIGKILL to
/// the group. Killing the watcher itself disarms it.
class group_guard {
public:
    /// Forks the watcher; throws std::system_error when it cannot.
    group_guard();
    /// Dismisses the watcher (if still watching) and reaps it.
    ~group_guard();
    group_guard(const group_guard&) = delete;
    group_guard& operator=(const group_guard&) = delete;

    /// For the child (spawn_options::group_guard_socket): the descriptor on which it sends
    /// its process group id (close-on-exec).
    int child_socket() const noexcept { return socket_; }
    /// The watcher exits without killing anything. Call it before reaping the child: once
    /// the child is reaped, its group id may name another group. Idempotent.
    void dismiss() noexcept;

private:
    pid_t watcher_ = -1;
    int socket_ = -1; ///< our end, close-on-exec: only this process holds it
};

} // namespace conclave::programs
