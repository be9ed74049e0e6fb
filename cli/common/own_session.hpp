// SPDX-License-Identifier: BSL-1.0
// The session `group join` and `barrier enter` hold their key with: created for the
// command (behavior delete, so that a process that dies leaves no key behind), renewed while
// it runs, destroyed at its end.
#pragma once

#include "cli/common/held_command.hpp"
#include "cli/lock/session_keeper.hpp"

#include <conclave/client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <memory>
#include <string>

namespace conclave::cli {

/// A started session, or the exit status when none could be started.
struct own_session_start {
    std::unique_ptr<session_keeper> keeper;
    int status = 0; ///< when keeper is empty
};

/// Checks that the agent answers (check_agent, `stage` naming what a signal interrupted:
/// "group join"), then creates the session `cfg` describes (name, TTL, lock-delay) and keeps
/// it renewed. On failure the reason is on stderr ("<what> failed: failed to create
/// session: ..."). The create is not raced with signals: one cancelled after it reached
/// Consul would leave a session nobody destroys (the client's request timeout bounds it).
boost::asio::awaitable<own_session_start> start_own_session(client& consul,
                                                            boost::asio::signal_set& signals,
                                                            const held_command_settings& cfg,
                                                            const std::string& stage,
                                                            const std::string& what);

/// Destroys the session (its keys go with it): false, the reason on stderr, when that failed.
boost::asio::awaitable<bool> end_own_session(session_keeper& keeper);

} // namespace conclave::cli
