// SPDX-License-Identifier: BSL-1.0
// What `conclave lock` and `conclave elect` share about their child: how its command line
// is built, whether it gets a process group of its own, and how it is stopped.
#pragma once

#include "process/child_process.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace conclave::cli {

/// Between the first signal and SIGKILL when the child must stop (as consul lock).
inline constexpr std::chrono::seconds kill_grace{5};

/// With `shell`: `$SHELL -c "<arguments joined with spaces>"` (/bin/sh when SHELL is unset
/// or empty), as consul lock. Without: the arguments as given (PATH lookup).
std::vector<std::string> child_argv(const std::vector<std::string>& command, bool shell);

/// How `lock` and `elect` start their child: `command` as child_argv makes it, `extra_env`
/// added, stdin passed or /dev/null (as consul lock), a process group of its own unless
/// conclave runs in a terminal's foreground (below), and killed (with its group) when
/// conclave dies without stopping it (spawn_options::die_with_parent).
programs::spawn_options child_options(const std::vector<std::string>& command, bool shell,
                                      bool pass_stdin, std::vector<std::string> extra_env);

/// Whether conclave runs in a terminal's foreground. A child in a process group of its own
/// is then a background job, stopped by SIGTTIN/SIGTTOU when it reads or configures the
/// terminal (an editor, a prompt): it shares conclave's group instead, and signals reach
/// the child process only.
bool in_terminal_foreground();

/// Stops the child: `first` now (0: it was already signalled), SIGKILL after kill_grace,
/// and, when `signals` is given, every further SIGINT/SIGTERM forwarded meanwhile. Then
/// SIGKILL to what is left of its process group (nothing it started may run on once the
/// lock or leadership is gone). Returns the child's wait status. Meant to run to its end:
/// a cancellation only ends the grace period early.
boost::asio::awaitable<int> stop_child(programs::child_process& child, int first,
                                       boost::asio::signal_set* signals);

} // namespace conclave::cli
