// SPDX-License-Identifier: BSL-1.0
// A child process whose stdout we read: contend workers and the failover holder (this
// executable's hidden subcommands), and the Python and Node peers.
#pragma once

#include <cstdio>
#include <string>
#include <sys/types.h>
#include <vector>

namespace conclave::bench {

class child_process {
public:
    /// Starts argv[0] (a path, or a name looked up in PATH) with stdout piped to us.
    explicit child_process(const std::vector<std::string>& argv);
    ~child_process(); ///< kills (SIGKILL) and reaps a child still running
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;

    /// The next stdout line without its newline; false at end of output.
    bool read_line(std::string& line);
    /// Kills with `sig` now.
    void kill(int sig);
    /// Waits for the exit; returns the exit status (128 + signal when killed).
    int wait();
    pid_t pid() const { return pid_; }

private:
    pid_t pid_ = -1;
    std::FILE* out_ = nullptr;
    bool reaped_ = false;
    int status_ = 0;
};

} // namespace conclave::bench
