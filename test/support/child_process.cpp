// SPDX-License-Identifier: BSL-1.0
#include "support/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <unistd.h>

extern char** environ;

namespace conclave::test {

namespace {

std::string name_of(const std::string& entry) {
    return entry.substr(0, entry.find('='));
}

/// The descriptor the child's output goes to: the file, or ours (a duplicate) for none.
int open_output(const std::string& path, int ours) {
    const int fd = path.empty()
                       ? ::fcntl(ours, F_DUPFD_CLOEXEC, 0)
                       : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    return fd;
}

} // namespace

pid_t spawn_child(const child_spec& spec) {
    if (spec.argv.empty())
        throw std::runtime_error("spawn_child: no executable");

    // Everything the child needs is prepared before fork: after it, a multi-threaded
    // parent's child may only make async-signal-safe calls.
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        bool overridden = false;
        for (const auto& mine : spec.env)
            overridden = overridden || name_of(mine) == name_of(*e);
        if (!overridden)
            env.emplace_back(*e);
    }
    env.insert(env.end(), spec.env.begin(), spec.env.end());
    std::vector<char*> argv, envp;
    for (const auto& a : spec.argv)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int out = open_output(spec.stdout_path, STDOUT_FILENO);
    const bool same = !spec.stderr_path.empty() && spec.stderr_path == spec.stdout_path;
    const int err = same ? out : open_output(spec.stderr_path, STDERR_FILENO);
    const pid_t parent = ::getpid();

    const pid_t pid = ::fork();
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) // the parent died before the line above
            ::_exit(127);
        ::dup2(in, STDIN_FILENO);
        ::dup2(out, STDOUT_FILENO);
        ::dup2(err, STDERR_FILENO);
        ::close_range(STDERR_FILENO + 1, ~0U, 0);
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    const int fork_errno = errno;
    ::close(in);
    ::close(out);
    if (!same)
        ::close(err);
    if (pid < 0)
        throw std::runtime_error(std::string("fork failed: ") + std::strerror(fork_errno));
    return pid;
}

} // namespace conclave::test
