// SPDX-License-Identifier: BSL-1.0
#include "child_process.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

std::string env_name(const std::string& entry) {
    return entry.substr(0, entry.find('='));
}

// Frees posix_spawn's attribute objects on every path.
struct spawn_setup {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    spawn_setup() {
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attr);
    }
    ~spawn_setup() {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
    }
    spawn_setup(const spawn_setup&) = delete;
    spawn_setup& operator=(const spawn_setup&) = delete;
};

} // namespace

child_process::child_process(asio::any_io_executor ex, const child_options& opts)
    : ex_(std::move(ex))
    , own_group_(opts.own_process_group) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string entry(*e);
        bool replaced = false;
        for (const auto& extra : opts.extra_env)
            replaced = replaced || env_name(extra) == env_name(entry);
        if (!replaced)
            env.push_back(std::move(entry));
    }
    env.insert(env.end(), opts.extra_env.begin(), opts.extra_env.end());

    std::vector<char*> argv, envp;
    for (const auto& a : opts.argv)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    spawn_setup s;
    if (!opts.pass_stdin)
        posix_spawn_file_actions_addopen(&s.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    // Asio's sockets (the Consul connections) are not close-on-exec: the child must not
    // inherit them, so everything above stderr is closed, as Go's exec does.
    posix_spawn_file_actions_addclosefrom_np(&s.actions, STDERR_FILENO + 1);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (own_group_) {
        flags |= POSIX_SPAWN_SETPGROUP;
        posix_spawnattr_setpgroup(&s.attr, 0);
    }
    posix_spawnattr_setflags(&s.attr, flags);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&s.attr, &none);
    // Signals this process handles or may ignore start at their defaults in the child.
    sigset_t defaults;
    sigemptyset(&defaults);
    for (const int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD})
        sigaddset(&defaults, sig);
    posix_spawnattr_setsigdefault(&s.attr, &defaults);

    const int rc = ::posix_spawnp(&pid_, argv[0], &s.actions, &s.attr, argv.data(), envp.data());
    if (rc != 0) {
        pid_ = -1;
        throw boost::system::system_error(error_code(rc, boost::system::system_category()),
                                          "cannot start '" + opts.argv[0] + "'");
    }
}

child_process::~child_process() {
    if (pid_ > 0 && !reaped_) {
        signal(SIGKILL);
        reap();
    }
}

bool child_process::exited() const noexcept {
    siginfo_t info{};
    // WNOWAIT: look without reaping, so the pid stays ours until reap().
    return ::waitid(P_PID, id_t(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid_;
}

asio::awaitable<error_code> child_process::async_wait_exit() {
    using namespace std::chrono_literals;
    for (;;) {
        if (reaped_ || exited())
            co_return error_code{};
        // A pidfd becomes readable when the process exits. A fresh one per wait, registered
        // right before waiting: Asio's epoll registration is edge-triggered, and epoll
        // reports a descriptor that is already readable when it is added, so an exit is
        // never missed.
        const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
        if (fd >= 0) {
            asio::posix::stream_descriptor d(ex_, fd);
            auto [ec] = co_await d.async_wait(asio::posix::descriptor_base::wait_read,
                                              asio::as_tuple(asio::use_awaitable));
            if (ec)
                co_return ec;
        } else {
            // No pidfd (Linux before 5.3, or a seccomp filter): poll.
            asio::steady_timer t(ex_, 20ms);
            auto [ec] = co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
            if (ec)
                co_return ec;
        }
    }
}

void child_process::signal(int sig) noexcept {
    if (pid_ <= 0 || reaped_)
        return;
    if (own_group_ && ::kill(-pid_, sig) == 0)
        return;
    ::kill(pid_, sig);
}

int child_process::reap() noexcept {
    if (reaped_ || pid_ <= 0)
        return status_;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    status_ = status;
    return status_;
}

std::string describe_wait_status(int status) {
    if (WIFEXITED(status))
        return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
    }
    return "wait status " + std::to_string(status);
}

} // namespace conclave::cli
