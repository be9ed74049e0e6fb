// SPDX-License-Identifier: BSL-1.0
#include "process/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

namespace conclave::programs {

child_process::child_process(const spawn_options& options)
    : own_group_(options.own_process_group) {
    // Started first: a death between the two leaves a child that dies too (its
    // PR_SET_PDEATHSIG) and an unarmed guard that exits.
    spawn_options with_guard = options;
    if (options.die_with_parent && options.own_process_group) {
        guard_ = std::make_unique<group_guard>();
        with_guard.group_guard_socket = guard_->child_socket();
    }
    const spawned child = spawn(with_guard);
    pid_ = child.pid;
    if (child.stdout_pipe >= 0 && (stdout_ = ::fdopen(child.stdout_pipe, "r")) == nullptr)
        ::close(child.stdout_pipe); // (out of memory) read_line then sees no output
}

child_process::~child_process() {
    if (!reaped_) {
        signal(SIGKILL);
        reap();
    }
    if (stdout_ != nullptr)
        std::fclose(stdout_);
}

bool child_process::exited() const noexcept {
    if (reaped_)
        return true;
    siginfo_t info{};
    // WNOWAIT: look without reaping, so the pid stays ours until reap().
    return ::waitid(P_PID, id_t(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid_;
}

void child_process::signal(int sig) const noexcept {
    if (reaped_)
        return;
    if (own_group_ && ::kill(-pid_, sig) == 0)
        return;
    ::kill(pid_, sig);
}

int child_process::reap() noexcept {
    if (reaped_)
        return status_;
    if (guard_)
        guard_->dismiss(); // while the group id still names the child's group
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    guard_.reset();
    reaped_ = true;
    status_ = status;
    return status_;
}

bool child_process::read_line(std::string& line) {
    line.clear();
    if (stdout_ == nullptr)
        return false;
    char buf[4096];
    while (std::fgets(buf, sizeof buf, stdout_) != nullptr) {
        line += buf;
        if (line.back() == '\n') {
            line.pop_back();
            return true;
        }
    }
    return !line.empty();
}

} // namespace conclave::programs
