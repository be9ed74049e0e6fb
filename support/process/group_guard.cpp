// SPDX-License-Identifier: BSL-1.0
#include "process/group_guard.hpp"

#include <cerrno>
#include <csignal>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

namespace conclave::programs {

namespace {

// Reads exactly `size` bytes; false at the end of the stream (or an error) before that.
bool read_all(int fd, void* data, std::size_t size) noexcept {
    auto* p = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t got = ::read(fd, p, size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        p += got;
        size -= static_cast<std::size_t>(got);
    }
    return true;
}

// The watcher, forked from a possibly multi-threaded process: async-signal-safe calls only.
// Every signal stays blocked (as across fork): a supervisor's SIGTERM or a terminal's
// SIGINT to our process group must not end the watch early; only SIGKILL does.
[[noreturn]] void watch_socket(int in) noexcept {
    // Out of our process group, under a name of its own: `kill -9 -PGID`, supervisord's
    // killasgroup or `killall conclave` must not end the watcher along with us.
    ::setpgid(0, 0);
    ::prctl(PR_SET_NAME, "conclave-guard");
    // Holds no one's terminal, pipe or socket open: the socket becomes descriptor 0 and
    // everything else is closed (closefrom falls back to /proc/self/fd where the kernel has
    // no close_range).
    if (in != 0) {
        ::dup2(in, 0);
        in = 0;
    }
    ::closefrom(1);
    pid_t pgid = 0;
    if (!read_all(in, &pgid, sizeof pgid))
        ::_exit(0); // dismissed, or we died, before the child could start anything
    char dismissed = 0;
    if (!read_all(in, &dismissed, 1) && pgid > 0)
        ::kill(-pgid, SIGKILL);
    ::_exit(0);
}

} // namespace

group_guard::group_guard() {
    // A socket pair rather than a pipe: send() with MSG_NOSIGNAL, so a watcher killed by
    // someone else costs us no SIGPIPE.
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        throw std::system_error(errno, std::system_category(), "socketpair");
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[1]);
        watch_socket(fds[0]);
    }
    const int fork_error = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::close(fds[0]);
    if (pid < 0) {
        ::close(fds[1]);
        throw std::system_error(fork_error, std::system_category(), "fork");
    }
    watcher_ = pid;
    socket_ = fds[1];
}

group_guard::~group_guard() {
    dismiss();
    while (::waitpid(watcher_, nullptr, 0) < 0 && errno == EINTR) {
    }
}

void group_guard::dismiss() noexcept {
    if (socket_ < 0)
        return;
    const char dismissed = 1;
    [[maybe_unused]] const auto sent = ::send(socket_, &dismissed, 1, MSG_NOSIGNAL);
    ::close(socket_);
    socket_ = -1;
}

} // namespace conclave::programs
