// SPDX-License-Identifier: BSL-1.0
// Runs the child of `group join` and `barrier enter` while what they hold lasts: until it
// exits, what is held is lost (the child is stopped, exit 3, as `conclave lock`), or a
// SIGINT/SIGTERM comes (forwarded, 128 + the signal).
#pragma once

#include "cli/common/held_command.hpp"
#include "cli/common/jeopardy_relay.hpp"

#include <conclave/grant.hpp>
#include <conclave/session.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace conclave::cli {

/// What the child runs under, seen from the command.
struct held_by_child {
    /// Completes when it is lost (never with success; cancellable). Empty: nothing to lose.
    std::function<boost::asio::awaitable<error_code>()> wait_lost;
    /// Still held as far as this process knows (no I/O).
    std::function<bool()> held;
    /// Its health, relayed to the child (-jeopardy-signal).
    health_source health;
    /// For messages: "Membership", "Barrier".
    std::string what;
};

/// held_by_child for a grant (a membership).
held_by_child held_grant(const grant& g, std::string what);
/// held_by_child for a session (a participant of a double barrier counts while its session
/// lives); `s` must outlive the result.
held_by_child held_session(session& s, std::string what);

/// Starts `cfg.command` with `env`, and waits as above. Returns the exit status: ok (the
/// child's own status unless `child_exit_code`: then exit_code::child_failed when it
/// failed), exit_code::lock_lost, interrupted_base + signal, or exit_code::error when it
/// could not start (the reason on stderr).
boost::asio::awaitable<int> run_child(const held_command_settings& cfg, bool child_exit_code,
                                      std::vector<std::string> env, const held_by_child& held,
                                      boost::asio::signal_set& signals);

/// Why a grant or a session was lost, in words (errc::lock_lost, session_invalidated,
/// session_expired; others: their message).
std::string describe_loss(const error_code& ec);

/// `text` and a newline on stderr.
void say(const std::string& text);

/// The command after its `leading` arguments, without a `--` that would start it.
std::vector<std::string> command_after(const std::vector<std::string_view>& rest,
                                       std::size_t leading);

} // namespace conclave::cli
