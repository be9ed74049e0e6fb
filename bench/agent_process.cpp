#include "agent_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace conclave::bench {

agent_process::agent_process(std::string extra_flags) {
    std::vector<std::string> argv_s{CONCLAVE_CLI_PATH, "agent",       "-dev",
                                    "-http-addr",      "127.0.0.1:0", "-test-controls"};
    std::istringstream extra(extra_flags);
    for (std::string f; extra >> f;)
        argv_s.push_back(f);
    std::vector<char*> argv;
    for (auto& s : argv_s)
        argv.push_back(s.data());
    argv.push_back(nullptr);

    int fds[2];
    if (::pipe(fds) != 0)
        throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    const int rc = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        throw std::runtime_error(std::string("cannot start ") + argv[0] + ": " + std::strerror(rc));
    }
    // The agent prints one line naming its address once it listens.
    FILE* out = ::fdopen(fds[0], "r");
    char line[512] = {};
    const bool got = std::fgets(line, sizeof line, out) != nullptr;
    std::fclose(out);
    const std::string text = got ? line : "";
    const auto at = text.find("127.0.0.1:");
    if (at == std::string::npos) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        throw std::runtime_error("agent did not report its address: '" + text + "'");
    }
    // "conclave dev agent listening on 127.0.0.1:<port> (node ..., datacenter ...)"
    address_ = text.substr(at, text.find_first_of(" \r\n", at) - at);
}

agent_process::~agent_process() {
    if (pid_ > 0) {
        ::kill(pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
    }
}

} // namespace conclave::bench
