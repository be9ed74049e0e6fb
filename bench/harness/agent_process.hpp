// SPDX-License-Identifier: BSL-1.0
// Runs `conclave agent -dev` as a child process, so the server under test does not share
// the benchmark's event loop or CPU accounting.
#pragma once

#include "harness/piped_child.hpp"

#include <memory>
#include <string>
#include <sys/types.h>

namespace conclave::bench {

class agent_process {
public:
    /// Starts the agent on a free loopback port and waits until it listens.
    /// Throws std::runtime_error when it cannot.
    explicit agent_process(std::string extra_flags = {});
    ~agent_process();
    agent_process(const agent_process&) = delete;
    agent_process& operator=(const agent_process&) = delete;

    /// "127.0.0.1:<port>"
    const std::string& address() const { return address_; }
    pid_t pid() const { return child_->pid(); }

private:
    std::unique_ptr<child_process> child_;
    std::string address_;
};

} // namespace conclave::bench
