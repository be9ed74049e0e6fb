// SPDX-License-Identifier: BSL-1.0
// `conclave elect` once its arguments are valid: campaign, run the child while leading,
// campaign again after each term; on SIGINT/SIGTERM stop the child, release, clean up.
#pragma once

#include "cli/common/held_command.hpp"

#include <conclave/client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <cstdint>
#include <string>

namespace conclave::cli {

struct elect_settings : held_command_settings {
    std::string key;                ///< cleaned: no leading, trailing or doubled '/'
    std::string value;              ///< published in the key while leading (-name)
    std::int64_t max_restarts = -1; ///< failures in a row restarted; < 0: no limit
    bool once = false;
};

/// Returns the exit status. `signals` (SIGINT, SIGTERM) is installed by the caller before
/// anything else, so a signal is never lost.
boost::asio::awaitable<int> run_elect(const elect_settings& cfg, client& consul,
                                      boost::asio::signal_set& signals);

/// `elect -leader <key>`: prints the leader's published value (0), or "no leader" on
/// stderr (1).
boost::asio::awaitable<int> print_leader(const std::string& key, client& consul);

} // namespace conclave::cli
