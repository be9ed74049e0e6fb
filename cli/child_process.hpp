// SPDX-License-Identifier: BSL-1.0
// The child process `conclave lock` runs while it holds the lock: started with
// posix_spawnp, awaited on the io_context, signalled as a process group.
#pragma once

#include <conclave/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <string>
#include <sys/types.h>
#include <vector>

namespace conclave::cli {

struct child_options {
    std::vector<std::string> argv;      ///< argv[0] is looked up in PATH
    std::vector<std::string> extra_env; ///< "NAME=value", replacing inherited values
    bool pass_stdin = false;            ///< otherwise stdin is /dev/null (as consul lock)
    /// Put the child in a process group of its own, so signals reach everything it started
    /// (`sh -c 'a; b'`, pipelines), not only the shell.
    bool own_process_group = true;
};

/// A running child. Never outlived by it: the destructor kills (SIGKILL) and reaps a child
/// that was not reaped yet, so no path leaves a process behind.
class child_process {
public:
    /// Starts the child. Throws boost::system::system_error when it cannot be started
    /// (e.g. command not found); only descriptors 0-2 are inherited.
    child_process(boost::asio::any_io_executor ex, const child_options& opts);
    ~child_process();
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;

    pid_t pid() const noexcept { return pid_; }

    /// Completes (with success) once the child has exited; it is not reaped, so its pid
    /// and process group cannot be reused before reap(). operation_aborted when cancelled.
    boost::asio::awaitable<error_code> async_wait_exit();

    /// Sends `sig` to the child's process group (or the child alone when it has none).
    /// Does nothing once reaped.
    void signal(int sig) noexcept;

    /// Waits for the child (call after async_wait_exit) and returns its wait status.
    int reap() noexcept;

private:
    bool exited() const noexcept;

    boost::asio::any_io_executor ex_;
    pid_t pid_ = -1;
    bool own_group_ = false;
    bool reaped_ = false;
    int status_ = 0;
};

/// "exit status 3", "killed by signal 15 (Terminated)".
std::string describe_wait_status(int status);

} // namespace conclave::cli
