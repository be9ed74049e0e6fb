// SPDX-License-Identifier: BSL-1.0
// Kills a child's process group when the process that started it dies without reaping it
// (SIGKILL, a crash): PR_SET_PDEATHSIG only reaches the child itself, not what it started
// (`sh -c 'a; b'`, pipelines, background jobs). Used by child_process for children that
// die with their parent and have a process group of their own.
#pragma once

#include <sys/types.h>

namespace conclave::programs {

/// A watcher process, forked before the child, that waits on a socket only we hold. It
/// learns the group from watch(); when the socket then ends without dismiss() (we are gone:
/// the kernel closed our end), it sends SIGKILL to the group. If we die before watch(),
/// it exits: the child, with PR_SET_PDEATHSIG set before exec, dies too and has started
/// nothing yet.
class group_guard {
public:
    /// Forks the watcher; throws std::system_error when it cannot.
    group_guard();
    /// Dismisses the watcher (if still watching) and reaps it.
    ~group_guard();
    group_guard(const group_guard&) = delete;
    group_guard& operator=(const group_guard&) = delete;

    /// From now on, our death kills process group `pgid`.
    void watch(pid_t pgid) noexcept;
    /// The watcher exits without killing anything. Call it before reaping the child: once
    /// the child is reaped, its group id may name another group. Idempotent.
    void dismiss() noexcept;

private:
    pid_t watcher_ = -1;
    int socket_ = -1; ///< our end, close-on-exec: only this process holds it
};

} // namespace conclave::programs
