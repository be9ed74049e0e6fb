// SPDX-License-Identifier: BSL-1.0
// The session `group join` and `barrier enter` hold their key with: created for the
// command (behavior delete, so that a process that dies leaves no key behind), renewed while
// it runs, destroyed at its end.
#pragma once

#include "cli/common/held_command.hpp"
#include "cli/lock/session_keeper.hpp"

#include <conclave/client.hpp>

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <string>

namespace conclave::cli {

/// Creates the session `cfg` describes (name, TTL, lock-delay) and keeps it renewed.
/// Nothing when that failed, the reason on stderr ("<what> failed: failed to create
/// session: ..."). Not to be raced with signals: a create cancelled after it reached Consul
/// would leave a session nobody destroys (the client's request timeout bounds it).
boost::asio::awaitable<std::unique_ptr<session_keeper>>
create_own_session(client& consul, const held_command_settings& cfg, const std::string& what);

/// Destroys the session (its keys go with it): false, the reason on stderr, when that failed.
boost::asio::awaitable<bool> end_own_session(session_keeper& keeper);

} // namespace conclave::cli
