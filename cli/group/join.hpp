// SPDX-License-Identifier: BSL-1.0
// `conclave group join` once its arguments are valid: join with a session of its own, run
// the command while a member, leave, clean up.
#pragma once

#include "cli/common/held_command.hpp"

#include <conclave/client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <string>

namespace conclave::cli {

struct group_join_settings : held_command_settings {
    std::string prefix;
    std::string id;
    std::string value; ///< -value
    bool child_exit_code = false;
};

/// Returns the exit status. `signals` (SIGINT, SIGTERM) is installed by the caller first.
boost::asio::awaitable<int> run_group_join(const group_join_settings& cfg, client& consul,
                                           boost::asio::signal_set& signals);

} // namespace conclave::cli
