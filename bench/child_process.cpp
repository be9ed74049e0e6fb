// SPDX-License-Identifier: BSL-1.0
#include "child_process.hpp"

#include <csignal>
#include <cstring>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace conclave::bench {

child_process::child_process(const std::vector<std::string>& argv_s) {
    std::vector<std::string> copy = argv_s;
    std::vector<char*> argv;
    for (auto& s : copy)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    int fds[2];
    if (::pipe(fds) != 0)
        throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    const int rc = ::posix_spawnp(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        throw std::runtime_error("cannot start " + argv_s[0] + ": " + std::strerror(rc));
    }
    out_ = ::fdopen(fds[0], "r");
}

child_process::~child_process() {
    if (!reaped_) {
        ::kill(pid_, SIGKILL);
        wait();
    }
    if (out_)
        std::fclose(out_);
}

bool child_process::read_line(std::string& line) {
    line.clear();
    char buf[4096];
    while (std::fgets(buf, sizeof buf, out_)) {
        line += buf;
        if (!line.empty() && line.back() == '\n') {
            line.pop_back();
            return true;
        }
    }
    return !line.empty();
}

void child_process::kill(int sig) {
    if (!reaped_)
        ::kill(pid_, sig);
}

int child_process::wait() {
    if (!reaped_) {
        int st = 0;
        while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
        }
        reaped_ = true;
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    return status_;
}

} // namespace conclave::bench
