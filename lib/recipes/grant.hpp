// What every grant (lock lease, semaphore permit) shares: its session, fencing token, lost
// state, and the wait for loss.
#pragma once

#include "recipes/notifier.hpp"
#include "recipes/session_state.hpp"
#include "recipes/shared_query.hpp"

#include <conclave/lock.hpp>

#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/this_coro.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
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

/// A grant's monitor subscribes to the hub's query (which then runs) only this long after
/// it began. A holder that releases sooner (a short critical section) would have paid a
/// query and its wake-up by the release for nothing: a third request per cycle. Nothing is
/// missed: the query asks from the index our acquire wrote, so a change made meanwhile
/// answers at once. Losing the session is noticed without the query (renewals, local
/// deadline). Waited here, on the monitor's own timer, rather than by the query: a query
/// woken for a monitor that then leaves within the delay costs two resumptions of its loop
/// and two timers armed anew per watched lock cycle.
inline constexpr auto monitor_start_delay = std::chrono::milliseconds{1};

/// Waits until the grant is lost: `still_held()` (asked of the hub's state whenever it is
/// known) says no, the hub's query failed more than `retries` times in a row, the session is
/// lost (invalidated or past its local deadline), or the grant was marked lost (released by
/// us). Returns the first reason. One loop and one timer over the three notifiers, where
/// `watch || session_loss || grant_event` would run three coroutines and two `||` groups:
/// a monitored lock cycle sets this up every time (~15% of its client instructions).
template <class StillHeld>
asio::awaitable<error_code> wait_grant_lost(std::shared_ptr<grant_state> g, shared_query& hub,
                                            unsigned retries, StillHeld still_held) {
    // Cancelled is how this wait usually ends (`wait_lost() || work()`, then release):
    // answered as a value, since a thrown operation_aborted, caught and rethrown on its way
    // to the handler, cost about a fifth of a watched lock cycle's client instructions.
    co_await asio::this_coro::throw_if_cancelled(false);
    auto& s = *g->session;
    // The hub's query is subscribed to once the section outlasts monitor_start_delay.
    const auto subscribe_at = std::chrono::steady_clock::now() + monitor_start_delay;
    std::shared_ptr<void> subscription;
    while (!g->lost) {
        // Checked before each wait too: a cancellation emitted before the first wait began
        // (the start was posted, another thread emitted) would not reach its timer.
        const asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none)
            co_return make_error_code(asio::error::operation_aborted);
        if (s.check(std::chrono::steady_clock::now())) {
            g->mark_lost(make_error_code(errc::session_invalidated));
            break;
        }
        if (hub.failures() > retries || (hub.known() && !still_held())) {
            g->mark_lost(make_error_code(errc::lock_lost));
            break;
        }
        auto until = s.policy.deadline();
        if (!subscription) {
            if (std::chrono::steady_clock::now() >= subscribe_at)
                subscription = hub.subscribe();
            else
                until = std::min(until, subscribe_at);
        }
        co_await notifier::wait_any(until, hub.changed, s.changed, g->changed);
    }
    co_return g->lost;
}

} // namespace conclave::detail
