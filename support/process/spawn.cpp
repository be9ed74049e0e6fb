// SPDX-License-Identifier: BSL-1.0
#include "process/exec_child.hpp"
#include "process/spawn.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <pthread.h>
#include <stdexcept>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace conclave::programs {

namespace {

// Closes a descriptor on every path out of spawn.
class owned_fd {
public:
    owned_fd() = default;
    explicit owned_fd(int fd)
        : fd_(fd) {}
    ~owned_fd() { reset(); }
    owned_fd(owned_fd&& other) noexcept
        : fd_(other.release()) {}
    owned_fd& operator=(owned_fd&& other) noexcept {
        reset(other.release());
        return *this;
    }

    int get() const noexcept { return fd_; }
    int release() noexcept { return std::exchange(fd_, -1); }
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

[[noreturn]] void throw_errno(int error, const std::string& what) {
    throw std::system_error(error, std::system_category(), what);
}

// A descriptor the child moves onto 0-2 must not be one of 0-2 itself (a parent started
// with a standard stream closed gets those numbers first): moving one could overwrite
// another before it is moved.
owned_fd above_stdio(int fd, const std::string& what) {
    if (fd < 0)
        throw_errno(errno, what);
    owned_fd owned(fd);
    if (fd > STDERR_FILENO)
        return owned;
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    if (moved < 0)
        throw_errno(errno, what);
    return owned_fd(moved);
}

owned_fd open_output(const std::string& path) {
    return above_stdio(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644),
                       "cannot open " + path);
}

std::string env_name(const std::string& entry) {
    return entry.substr(0, entry.find('='));
}

// Ours, with the entries of `extra` in place of those of the same names.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string entry(*e);
        bool replaced = false;
        for (const auto& mine : extra)
            replaced = replaced || env_name(mine) == env_name(entry);
        if (!replaced)
            env.push_back(std::move(entry));
    }
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

// Where posix_spawnp (and execvp) look for `name`, in order: the name itself when it holds
// a '/', otherwise in each PATH directory (an empty one is the current directory).
std::vector<std::string> exec_candidates(const std::string& name) {
    if (name.find('/') != std::string::npos)
        return {name};
    const char* path = std::getenv("PATH");
    const std::string dirs = path != nullptr ? path : "/bin:/usr/bin";
    std::vector<std::string> candidates;
    for (std::size_t start = 0;;) {
        const auto end = dirs.find(':', start);
        const std::string dir = dirs.substr(start, end - start);
        candidates.push_back(dir.empty() ? name : dir + "/" + name);
        if (end == std::string::npos)
            return candidates;
        start = end + 1;
    }
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

} // namespace

spawned spawn(const spawn_options& options) {
    if (options.argv.empty() || options.argv.front().empty())
        throw std::invalid_argument("spawn: no program");
    const std::string& program = options.argv.front();

    owned_fd in, out, err, ours;
    if (options.stdin_fd >= 0)
        in = above_stdio(::fcntl(options.stdin_fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1),
                         "cannot duplicate the child's stdin");
    else if (options.stdin_null)
        in = above_stdio(::open("/dev/null", O_RDONLY | O_CLOEXEC), "cannot open /dev/null");
    if (options.stdout_pipe) {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0)
            throw_errno(errno, "pipe");
        ours.reset(fds[0]);
        out = above_stdio(fds[1], "pipe");
    } else if (!options.stdout_file.empty()) {
        out = open_output(options.stdout_file);
    }
    const bool shared = !options.stdout_pipe && !options.stderr_file.empty() &&
                        options.stderr_file == options.stdout_file;
    if (!options.stderr_file.empty() && !shared)
        err = open_output(options.stderr_file);
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0)
        throw_errno(errno, "pipe");
    owned_fd report_in(report[0]);
    owned_fd report_out = above_stdio(report[1], "pipe");

    std::vector<std::string> argv = options.argv;
    std::vector<std::string> env = child_environment(options.extra_env);
    std::vector<std::string> candidates = exec_candidates(program);
    child_plan plan;
    plan.stdio[STDIN_FILENO] = in.get();
    plan.stdio[STDOUT_FILENO] = out.get();
    plan.stdio[STDERR_FILENO] = shared ? out.get() : err.get();
    plan.report = report_out.get();
    plan.own_process_group = options.own_process_group;
    plan.group_guard = options.own_process_group ? options.group_guard_socket : -1;
    plan.die_with_parent = options.die_with_parent;
    plan.parent = ::getpid();
    plan.paths = pointers(candidates);
    plan.argv = pointers(argv);
    plan.envp = pointers(env);

    // Every signal is blocked across fork, so none reaches the child before it has reset
    // our handlers; the child unblocks them right before exec.
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t pid = ::fork();
    if (pid == 0)
        exec_child(plan);
    const int fork_error = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0)
        throw_errno(fork_error, "cannot start " + program + ": fork");

    // The report pipe reads end-of-file once exec closed it, or the error exec failed with.
    report_out.reset();
    int error = 0;
    ssize_t got = 0;
    while ((got = ::read(report_in.get(), &error, sizeof error)) < 0 && errno == EINTR) {
    }
    if (got > 0) {
        while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        throw_errno(error, "cannot start " + program);
    }
    return {pid, ours.release()};
}

} // namespace conclave::programs
