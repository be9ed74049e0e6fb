// SPDX-License-Identifier: BSL-1.0
// Tells the child of `lock` / `elect` when its grant enters jeopardy (renewals of the
// session failing or late) and when it recovers: a line on stderr, and the signals the
// user chose (-jeopardy-signal, -recovery-signal).
#pragma once

#include <conclave/session.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <sys/types.h>
#include <tuple>

namespace conclave::cli {

/// The signals sent to the child (0: none).
struct jeopardy_signals {
    int jeopardy = 0; ///< -jeopardy-signal
    int recovery = 0; ///< -recovery-signal
};

/// What is held, seen through its hold_health.
struct health_source {
    /// async_wait_health_change(seen) of the grant, as a tuple (never throws).
    std::function<boost::asio::awaitable<std::tuple<error_code, hold_health>>(hold_health)>
        wait_change;
    /// remaining() of the grant.
    std::function<std::chrono::steady_clock::duration()> remaining;
};

/// Follows the grant's health from `held` until cancelled (it never completes by itself,
/// also not once the grant is lost: the loss is the caller's to handle). Each change to
/// jeopardy or back to held is one line on stderr ("Lock in jeopardy: ...", with `what` =
/// "Lock") and the matching signal to `child`, its first process only: a shell or a
/// program that handles the signal gets it, while the helpers it started (`sleep`, parts
/// of a pipeline) would die of its default action. `child` must not be reaped before the
/// relay ends (its pid could be reused).
boost::asio::awaitable<void> relay_health(health_source source, pid_t child,
                                          jeopardy_signals signals, std::string what);

} // namespace conclave::cli
