// SPDX-License-Identifier: BSL-1.0
// `conclave barrier enter` once its arguments are valid: enter the double barrier with a
// session of its own, run the command, leave and wait for the round, clean up.
#pragma once

#include "cli/common/held_command.hpp"

#include <conclave/client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace conclave::cli {

struct barrier_enter_settings : held_command_settings {
    std::string prefix;
    std::uint32_t participants = 0;      ///< -n
    std::chrono::nanoseconds timeout{0}; ///< of the enter (0: none)
    bool child_exit_code = false;
};

/// Returns the exit status. `signals` (SIGINT, SIGTERM) is installed by the caller first.
boost::asio::awaitable<int> run_barrier_enter(const barrier_enter_settings& cfg, client& consul,
                                              boost::asio::signal_set& signals);

} // namespace conclave::cli
