// SPDX-License-Identifier: BSL-1.0
// Runs a command against a real Consul started for it, and exits with the command's status:
//
//   conclave_test_with_consul CONSUL_BIN [--servers N] -- COMMAND [ARG ...]
//
// CONSUL_HTTP_ADDR names the first server. For suites that are whole programs (the examples,
// the benchmark smoke runs) rather than test cases built on test/support's backend.
#include "support/child_process.hpp"
#include "support/consul_server.hpp"

#include <cerrno>
#include <cstdio>
#include <exception>
#include <string>
#include <sys/wait.h>

int main(int argc, char** argv) {
    using namespace conclave::test;
    consul_server_options options;
    child_spec command;
    int i = 1;
    if (i < argc)
        options.binary = argv[i++];
    for (; i < argc && std::string{argv[i]} != "--"; ++i)
        if (std::string{argv[i]} == "--servers" && i + 1 < argc)
            options.servers = static_cast<unsigned>(std::stoul(argv[++i]));
    for (++i; i < argc; ++i)
        command.argv.emplace_back(argv[i]);
    if (options.binary.empty() || command.argv.empty()) {
        std::fprintf(stderr,
                     "usage: conclave_test_with_consul CONSUL_BIN [--servers N] -- COMMAND ...\n");
        return 2;
    }
    try {
        consul_server consul{options};
        command.env.push_back("CONSUL_HTTP_ADDR=" + consul.http_address());
        const pid_t pid = spawn_child(command);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "conclave_test_with_consul: %s\n", e.what());
        return 2;
    }
}
