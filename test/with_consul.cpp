// SPDX-License-Identifier: BSL-1.0
// Runs a command against a real Consul started for it, and exits with the command's status:
//
//   conclave_test_with_consul CONSUL_BIN [--servers N] -- COMMAND [ARG ...]
//
// CONSUL_HTTP_ADDR names the first server. For suites that are whole programs (the examples,
// the benchmark smoke runs) rather than test cases built on test/support's backend.
#include "process/wait_status.hpp"
#include "support/consul_server.hpp"
#include "support/test_child.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    using namespace conclave::test;
    consul_server_options options;
    std::vector<std::string> command;
    int i = 1;
    if (i < argc)
        options.binary = argv[i++];
    for (; i < argc && std::string{argv[i]} != "--"; ++i)
        if (std::string{argv[i]} == "--servers" && i + 1 < argc)
            options.servers = static_cast<unsigned>(std::stoul(argv[++i]));
    for (++i; i < argc; ++i)
        command.emplace_back(argv[i]);
    if (options.binary.empty() || command.empty()) {
        std::fprintf(stderr,
                     "usage: conclave_test_with_consul CONSUL_BIN [--servers N] -- COMMAND ...\n");
        return 2;
    }
    try {
        consul_server consul{options};
        conclave::programs::child_process child(
            test_child(command, {"CONSUL_HTTP_ADDR=" + consul.http_address()}));
        return conclave::programs::shell_status(child.reap());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "conclave_test_with_consul: %s\n", e.what());
        return 2;
    }
}
