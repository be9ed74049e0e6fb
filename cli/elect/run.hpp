// SPDX-License-Identifier: BSL-1.0
// `conclave elect` once its arguments are valid: campaign, run the child while leading,
// campaign again after each term; on SIGINT/SIGTERM stop the child, release, clean up.
#pragma once

#include "cli/common/jeopardy_relay.hpp"
#include "cli/common/session_ttl.hpp"

#include <conclave/client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace conclave::cli {

struct elect_settings {
    std::string key;                  ///< cleaned: no leading, trailing or doubled '/'
    std::vector<std::string> command; ///< the child's arguments as given
    std::string value;                ///< published in the key while leading (-name)
    std::string session_name;
    std::chrono::milliseconds lock_delay{default_lock_delay};
    std::chrono::milliseconds ttl{default_session_ttl}; ///< the session's (-ttl)
    std::int64_t max_restarts = -1; ///< failures in a row restarted; < 0: no limit
    bool shell = true;
    bool pass_stdin = false;
    bool once = false;
    bool verbose = false;
    jeopardy_signals signals; ///< -jeopardy-signal, -recovery-signal
};

/// Returns the exit status. `signals` (SIGINT, SIGTERM) is installed by the caller before
/// anything else, so a signal is never lost.
boost::asio::awaitable<int> run_elect(const elect_settings& cfg, client& consul,
                                      boost::asio::signal_set& signals);

/// `elect -leader <key>`: prints the leader's published value (0), or "no leader" on
/// stderr (1).
boost::asio::awaitable<int> print_leader(const std::string& key, client& consul);

} // namespace conclave::cli
