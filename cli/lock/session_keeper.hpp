// SPDX-License-Identifier: BSL-1.0
// Keeps a session renewed in the background while a command works, and ends it cleanly.
#pragma once

#include <conclave/session.hpp>

#include <boost/asio/awaitable.hpp>

#include <memory>

namespace conclave::cli {

/// Runs `s.async_run()` from construction until stop(). Why not `async_run() || work()`:
/// that would cancel the work when the session is lost first, and the work (killing the
/// child, cleaning up) must go on; the loss reaches it through the grant's lost signal.
class session_keeper {
public:
    explicit session_keeper(session s);
    session_keeper(const session_keeper&) = delete;
    session_keeper& operator=(const session_keeper&) = delete;

    session& get() noexcept { return session_; }

    /// Destroys the session and waits until the renew loop has ended. Returns the destroy's
    /// error (the loop is then cancelled, which tries once more within destroy_timeout).
    boost::asio::awaitable<error_code> stop();

private:
    struct state;
    session session_;
    std::shared_ptr<state> state_;
};

} // namespace conclave::cli
