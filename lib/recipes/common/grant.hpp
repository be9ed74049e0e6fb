// SPDX-License-Identifier: BSL-1.0
// What every grant (lock lease, semaphore permit) shares: its session, fencing token and lost
// state (the wait for loss is grant_loss_wait.hpp).
#pragma once

#include "consul/spawn.hpp"
#include "recipes/common/notifier.hpp"
#include "recipes/common/shared_query.hpp"
#include "recipes/session/session_state.hpp"

#include <conclave/grant.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <utility>

namespace conclave::detail {

struct grant_state {
    grant_state(std::shared_ptr<session_state> s, fencing_token t)
        : session(std::move(s))
        , token(std::move(t)) {
        ++session->open_grants;
    }
    virtual ~grant_state() { close(); }
    grant_state(const grant_state&) = delete;
    grant_state& operator=(const grant_state&) = delete;

    // What differs between the recipes (conclave::grant calls these).
    /// The executor of the recipe's client.
    virtual asio::any_io_executor executor() const = 0;
    /// Starts async_wait_lost: `self` is this grant.
    virtual void start_wait_lost(std::shared_ptr<grant_state> self,
                                 asio::any_completion_handler<void(error_code)> h) = 0;
    /// Starts async_release: `self` is this grant.
    virtual void start_release(std::shared_ptr<grant_state> self,
                               asio::any_completion_handler<void(error_code)> h) = 0;

    /// Records the first reason the grant ended and wakes its waiters. A loss (not our
    /// release) is reported.
    void mark_lost(error_code reason) {
        if (lost)
            return;
        lost = reason;
        // (Not ours to report: our release, or the end of our session, which we ended.)
        if (!released && !session->ended_by_us)
            report_health(session->consul, kind, token.key, hold_health::lost, reason);
        if (!session->ended_by_us)
            close(); // nothing left to release (a grant of a session we ended may still be)
        changed.notify_all();
    }

    /// Our release succeeded.
    void mark_released() {
        released = true;
        close();
    }

    /// The token while the grant may still be considered held (synchronous, no I/O).
    std::optional<fencing_token> held() {
        if (lost || released)
            return std::nullopt;
        if (session->check(std::chrono::steady_clock::now())) {
            mark_lost(session->lost);
            return std::nullopt;
        }
        return token;
    }

    /// lost once released or lost, else the session's health.
    hold_health health(std::chrono::steady_clock::time_point now) {
        if (lost || released)
            return hold_health::lost;
        const hold_health h = session->health(now);
        if (h == hold_health::lost)
            mark_lost(session->lost);
        return h;
    }
    /// Time left before the session's local deadline; zero once the grant ended.
    std::chrono::steady_clock::duration remaining(std::chrono::steady_clock::time_point now) {
        if (health(now) == hold_health::lost)
            return std::chrono::steady_clock::duration::zero();
        return session->remaining(now);
    }

    std::shared_ptr<session_state> session;
    fencing_token token;
    /// Acquires this grant stands for: 1, plus one for each re-entrant acquire that joined
    /// it, minus one for each release; 0 once its last release began.
    unsigned holds = 1;
    error_code lost;                  ///< first reason the grant ended
    bool released = false;            ///< released by us (Consul confirmed)
    hold_kind kind = hold_kind::lock; ///< what it is, in reports
    notifier changed;

private:
    // No release is to come any more (released, lost, or dropped): the session's close
    // stops waiting for this grant (session_state::open_grants). Only the close of a
    // session we ended waits, for the count to reach 0: other releases wake nobody (the
    // session's renew loop waits on `changed` too, and a lock cycle must not wake it).
    void close() {
        if (!std::exchange(open_, false))
            return;
        if (--session->open_grants == 0 && session->ended_by_us)
            session->changed.notify_all();
    }
    bool open_ = true;
};

/// The state of a grant of a recipe object whose state is `Recipe` (a lock's, a semaphore's,
/// ...): it keeps that state alive and runs on its client's executor.
template <class Recipe>
struct grant_of : grant_state {
    grant_of(std::shared_ptr<Recipe> r, std::shared_ptr<session_state> s, fencing_token t,
             hold_kind k)
        : grant_state(std::move(s), std::move(t))
        , recipe(std::move(r)) {
        kind = k;
    }

    asio::any_io_executor executor() const override { return recipe->consul.get_executor(); }

    std::shared_ptr<Recipe> recipe;
};

/// A re-entrant acquire with `session` joins `g` (and counts one more hold of it) when `g`
/// holds the key with that session here: not released, not lost, its session alive, its
/// last release not begun. Returns `g` then (a `State`), else null (the acquire goes its
/// usual way).
template <class State>
std::shared_ptr<State> join_if_held(std::shared_ptr<grant_state> g, const std::string& session) {
    if (!g || g->session->id != session || g->holds == 0 || !g->held())
        return nullptr;
    ++g->holds;
    return std::static_pointer_cast<State>(std::move(g));
}

/// Completes `h` with errc::invalid_argument: the operation was asked of an empty grant (a
/// default-constructed lease, permit or leadership).
void refuse_empty_grant(asio::any_completion_handler<void(error_code, txn_result)> h);
void refuse_empty_grant(asio::any_completion_handler<void(error_code, bool)> h);
void refuse_empty_grant(asio::any_completion_handler<void(error_code)> h);

/// Runs an operation of a grant whose state is a `State`: `op(state)` (an awaitable) as a
/// coroutine of its own on the grant's executor, completing `h`. Refused at once for an
/// empty grant.
template <class State, class Handler, class Op>
void run_grant_op(std::shared_ptr<grant_state> s, Handler h, Op op) {
    if (!s)
        return refuse_empty_grant(std::move(h));
    auto state = std::static_pointer_cast<State>(std::move(s));
    auto ex = state->executor();
    spawn_op(ex, op(std::move(state)), std::move(h));
}

/// A grant's monitor subscribes to the hub's query (which then runs) only this long after
/// it began. A holder that releases sooner (a short critical section) would have paid a
/// query and its wake-up by the release for nothing: a third request per cycle. Nothing is
/// missed: the query asks from the index our acquire wrote, so a change made meanwhile
/// answers at once. Losing the session is noticed without the query (renewals, local
/// deadline). Waited by the monitor, on its own timer, rather than by the query: a query
/// woken for a monitor that then leaves within the delay costs two resumptions of its loop
/// and two timers armed anew per watched lock cycle.
inline constexpr auto monitor_start_delay = std::chrono::milliseconds{1};

} // namespace conclave::detail
