// SPDX-License-Identifier: BSL-1.0
// `conclave lock` once its arguments are valid: acquire, run the child, release, clean up.
#pragma once

#include "cli/common/jeopardy_relay.hpp"
#include "cli/common/session_ttl.hpp"

#include <conclave/client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace conclave::cli {

struct lock_settings {
    std::string prefix;               ///< cleaned: no leading, trailing or doubled '/'
    std::vector<std::string> command; ///< the child's arguments as given
    unsigned limit = 1;               ///< -n
    std::chrono::nanoseconds timeout{0};
    unsigned monitor_retries = 3;
    std::string session_name;
    std::chrono::milliseconds ttl{default_session_ttl}; ///< the session's (-ttl)
    /// The session's (-lock-delay); `consul lock`'s session has Consul's default, 15 s.
    std::chrono::milliseconds lock_delay{default_lock_delay};
    bool shell = true;
    bool pass_stdin = false;
    bool child_exit_code = false;
    bool verbose = false;
    jeopardy_signals signals; ///< -jeopardy-signal, -recovery-signal
};

/// Returns the exit status. `signals` (SIGINT, SIGTERM) is installed by the caller before
/// anything else, so a signal is never lost: what arrives while it is not awaited is queued.
boost::asio::awaitable<int> run_lock(const lock_settings& cfg, client& consul,
                                     boost::asio::signal_set& signals);

} // namespace conclave::cli
