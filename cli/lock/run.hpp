// SPDX-License-Identifier: BSL-1.0
// `conclave lock` once its arguments are valid: acquire, run the child, release, clean up.
#pragma once

#include "cli/common/held_command.hpp"
#include "cli/lock/holder.hpp"

#include <conclave/client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <string>

namespace conclave::cli {

struct lock_settings : held_command_settings {
    std::string prefix;                ///< cleaned: no leading, trailing or doubled '/'
    unsigned limit = 1;                ///< -n
    lock_mode mode = lock_mode::plain; ///< -shared, -exclusive (then limit is 1)
    std::chrono::nanoseconds timeout{0};
    unsigned monitor_retries = 3;
    bool child_exit_code = false;
};

/// Returns the exit status. `signals` (SIGINT, SIGTERM) is installed by the caller before
/// anything else, so a signal is never lost: what arrives while it is not awaited is queued.
boost::asio::awaitable<int> run_lock(const lock_settings& cfg, client& consul,
                                     boost::asio::signal_set& signals);

} // namespace conclave::cli
