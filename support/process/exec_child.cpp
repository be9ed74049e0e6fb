// SPDX-License-Identifier: BSL-1.0
#include "process/exec_child.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace conclave::programs {

namespace {

// Whether exec goes on with the next PATH candidate after this error (execvp's rule).
bool try_next(int error) {
    return error == EACCES || error == ENOENT || error == ESTALE || error == ENOTDIR ||
           error == ENODEV || error == ETIMEDOUT;
}

// Sends the error back to spawn (a pipe write of an int is atomic) and ends the child.
[[noreturn]] void fail(int report, int error) noexcept {
    [[maybe_unused]] const auto written = ::write(report, &error, sizeof error);
    ::_exit(127);
}

} // namespace

void exec_child(const child_plan& p) noexcept {
    int report = p.report;
    if (p.die_with_parent) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != p.parent) // the parent died before the line above
            ::_exit(127);
    }
    // Our handlers must not run here (Asio's writes to our signal pipe): a handled signal
    // goes back to its default, and so do SIGINT, SIGTERM, SIGPIPE and SIGCHLD when we
    // ignore them, as in a freshly started program. Other ignored signals stay ignored (as
    // nohup wants); signals are unblocked right before exec.
    for (int sig = 1; sig < NSIG; ++sig) {
        struct sigaction sa {};
        if (::sigaction(sig, nullptr, &sa) != 0)
            continue;
        const bool handled = sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
        if (handled || sig == SIGINT || sig == SIGTERM || sig == SIGPIPE || sig == SIGCHLD) {
            sa = {};
            sa.sa_handler = SIG_DFL;
            ::sigaction(sig, &sa, nullptr);
        }
    }
    if (p.own_process_group && ::setpgid(0, 0) != 0)
        fail(report, errno);
    if (p.group_guard >= 0) {
        // Before anything can be started in the group: the watcher knows it from now on.
        const pid_t group = ::getpid();
        [[maybe_unused]] const auto sent =
            ::send(p.group_guard, &group, sizeof group, MSG_NOSIGNAL);
    }
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd)
        if (p.stdio[fd] >= 0 && ::dup2(p.stdio[fd], fd) < 0)
            fail(report, errno);
    // Nothing above stderr is inherited but the report pipe, moved to 3 (it closes at
    // exec): Asio's sockets (the Consul connections) are not close-on-exec.
    if (report != STDERR_FILENO + 1) {
        if (::dup3(report, STDERR_FILENO + 1, O_CLOEXEC) < 0)
            fail(report, errno);
        report = STDERR_FILENO + 1;
    }
    ::closefrom(report + 1);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);

    bool denied = false;
    int error = ENOENT;
    for (char* const* path = p.paths.data(); *path != nullptr; ++path) {
        ::execve(*path, p.argv.data(), p.envp.data());
        error = errno;
        if (!try_next(error))
            break;
        denied = denied || error == EACCES;
    }
    fail(report, denied && try_next(error) ? EACCES : error);
}

} // namespace conclave::programs
