// What every grant (lock lease, semaphore permit) shares: its session, fencing token, lost
// state, and the wait for loss.
#pragma once

#include "recipes/notifier.hpp"
#include "recipes/session_state.hpp"

#include <conclave/lock.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <optional>

namespace conclave::detail {

struct grant_state {
    grant_state(std::shared_ptr<session_state> s, fencing_token t)
        : session(std::move(s))
        , token(std::move(t)) {}

    /// Records the first reason the grant ended and wakes its waiters.
    void mark_lost(error_code reason) {
        if (lost)
            return;
        lost = reason;
        changed.notify_all();
    }

    /// The token while the grant may still be considered held (synchronous, no I/O).
    std::optional<fencing_token> held() {
        if (lost || released)
            return std::nullopt;
        if (session->check(std::chrono::steady_clock::now())) {
            mark_lost(make_error_code(errc::session_invalidated));
            return std::nullopt;
        }
        return token;
    }

    std::shared_ptr<session_state> session;
    fencing_token token;
    error_code lost;       ///< first reason the grant ended
    bool released = false; ///< released by us (Consul confirmed)
    notifier changed;
};

/// Returns when the session is lost (invalidated or past its local deadline).
inline asio::awaitable<void> session_loss(std::shared_ptr<session_state> s) {
    while (!s->check(std::chrono::steady_clock::now()))
        co_await s->changed.wait(s->policy.deadline());
}

/// Returns when the grant was marked lost by someone else (a release, another waiter).
inline asio::awaitable<void> grant_event(std::shared_ptr<grant_state> g) {
    while (!g->lost)
        co_await g->changed.wait(std::chrono::steady_clock::time_point::max());
}

/// Waits until the grant is lost: the first of `watch` (a coroutine watching the grant's
/// keys, returning the loss reason), the session's loss, or another waiter's verdict.
template <class Watch>
asio::awaitable<error_code> wait_grant_lost(std::shared_ptr<grant_state> g, Watch watch) {
    using namespace asio::experimental::awaitable_operators;
    while (!g->lost) {
        if (g->session->check(std::chrono::steady_clock::now())) {
            g->mark_lost(make_error_code(errc::session_invalidated));
            break;
        }
        auto keys = watch();
        auto sess = session_loss(g->session);
        auto self = grant_event(g);
        auto first = co_await (std::move(keys) || std::move(sess) || std::move(self));
        if (first.index() == 0)
            g->mark_lost(std::get<0>(first));
        else if (first.index() == 1)
            g->mark_lost(make_error_code(errc::session_invalidated));
    }
    co_return g->lost;
}

} // namespace conclave::detail
