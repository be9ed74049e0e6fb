// SPDX-License-Identifier: BSL-1.0
#include "harness/agent_process.hpp"

#include <csignal>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace conclave::bench {

agent_process::agent_process(std::string extra_flags) {
    std::vector<std::string> argv{CONCLAVE_CLI_PATH, "agent",       "-dev",
                                  "-http-addr",      "127.0.0.1:0", "-test-controls"};
    std::istringstream extra(extra_flags);
    for (std::string f; extra >> f;)
        argv.push_back(f);
    child_ = std::make_unique<child_process>(piped(std::move(argv)));
    // The agent prints one line naming its address once it listens:
    // "conclave dev agent listening on 127.0.0.1:<port> (node ..., datacenter ...)"
    std::string line;
    const bool got = child_->read_line(line);
    const auto at = line.find("127.0.0.1:");
    if (!got || at == std::string::npos) {
        child_->signal(SIGKILL);
        child_->reap();
        throw std::runtime_error("agent did not report its address: '" + line + "'");
    }
    address_ = line.substr(at, line.find_first_of(" \r\n", at) - at);
}

agent_process::~agent_process() {
    child_->signal(SIGTERM);
    child_->reap();
}

} // namespace conclave::bench
