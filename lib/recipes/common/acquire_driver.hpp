// SPDX-License-Identifier: BSL-1.0
// The one coroutine that performs the acquire machine's actions (acquire_fsm.hpp), for every
// recipe that acquires a grant: the lock, the semaphore, and those built on them. A recipe
// gives it three things of its own: how it sees the key now (a view), how it waits for a
// change, and how it attempts its transaction. The rest (sleeping, forgetting the shared
// query's view, asking the machine again) is the same for all, and lives here once.
#pragma once

#include "consul/spawn.hpp"
#include "observe/report.hpp"
#include "recipes/common/acquire_fsm.hpp"
#include "recipes/common/acquire_policy.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/session/session_state.hpp"

#include <conclave/observer.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace conclave::detail {

/// The deadline of an attempt (or of any one write an acquire must make): the acquire's,
/// but at least minimum_attempt_time from now, so that the one attempt a spent budget still
/// allows has time to be answered (a budget of 0 would leave it nothing).
inline std::optional<std::chrono::steady_clock::time_point>
attempt_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
    if (deadline)
        deadline = std::max(*deadline, std::chrono::steady_clock::now() + minimum_attempt_time);
    return deadline;
}

/// Performs the machine's actions from `action` until it finishes, and returns that finish.
/// - `view()`: the acquire_view now (no I/O);
/// - `wait(until)`: an awaitable that completes when something the waiter may act on
///   changes, or at `until`;
/// - `attempt()`: an awaitable of std::optional<attempt_outcome>, empty when the attempt
///   was cancelled (cancellation comes back as a value, never as an empty result);
/// - `forget()`: the view of the keys is out of date: read them again (the shared query's
///   forget(), of every key the recipe watches).
/// They are called, and their awaitables awaited, one at a time; callables that return a
/// coroutine of a named function (not a coroutine lambda) keep their state in the caller's
/// frame, which outlives this one.
template <class View, class Wait, class Attempt, class Forget>
asio::awaitable<acquire_action>
drive_acquire(acquire_fsm& fsm, std::optional<std::chrono::steady_clock::time_point> deadline,
              acquire_action action, View view, Wait wait, Attempt attempt, Forget forget) {
    using kind = acquire_action::kind;
    while (action.what != kind::finish) {
        switch (action.what) {
        case kind::wait:
            co_await wait(action.until);
            break;
        case kind::sleep:
            if (action.reread)
                forget();
            co_await sleep_for(action.pause, deadline);
            break;
        case kind::reread:
            forget();
            break;
        case kind::attempt: {
            std::optional<attempt_outcome> o = co_await attempt();
            action = o ? fsm.attempted(view(), *o) : fsm.cancelled();
            continue;
        }
        case kind::finish:
            break;
        }
        action = fsm.next(view());
    }
    co_return action;
}

/// How an acquire that ends without a grant is reported: cancelled, failed (with an error),
/// or out of time (neither).
inline acquire_outcome ungranted_outcome(bool cancelled, const error_code& ec) {
    return cancelled ? acquire_outcome::cancelled
           : ec      ? acquire_outcome::failed
                     : acquire_outcome::timed_out;
}

/// async_acquire's result from the acquire loop's: waiting without a deadline ends with a
/// grant or an error (an empty result, which only a deadline gives, counts as a timeout).
template <class Grant>
std::pair<error_code, Grant> waited_result(std::pair<error_code, std::optional<Grant>> r) {
    if (!r.first && !r.second)
        r.first = make_error_code(errc::timeout);
    return {r.first, r.second ? std::move(*r.second) : Grant{}};
}

/// The end of an acquire loop with `result`: a cancelled acquire completes with
/// operation_aborted, never with a grant; `report` says how it ended (`how`, when granted).
template <class Grant>
std::pair<error_code, std::optional<Grant>>
finish_acquire(acquire_report& report, std::pair<error_code, std::optional<Grant>> result,
               bool cancelled, acquire_outcome how) {
    if (cancelled)
        result = {asio::error::operation_aborted, std::nullopt};
    report.finish(result.second ? how : ungranted_outcome(cancelled, result.first), result.first);
    return result;
}

/// Throws errc::invalid_argument, saying `what`, for an acquire with an empty session.
inline void require_session(const std::shared_ptr<session_state>& s, const char* what) {
    if (!s)
        throw boost::system::system_error(make_error_code(errc::invalid_argument), what);
}

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

/// Starts an async_acquire (`h` of a grant: it waits without a deadline) or an
/// async_try_acquire (`h` of an optional grant, `deadline` its budget's end) of a recipe
/// whose state is `st`: `loop(st, s, deadline, diag)` is its acquire loop. An empty session
/// is refused at once (errc::invalid_argument, saying `what`). `diag` is the diagnostics
/// the token routes to, else `fallback`.
template <class Loop, class State, class Result>
void start_acquire(Loop loop, std::shared_ptr<State> st, std::shared_ptr<session_state> s,
                   deadline_t deadline, diagnostics_route* route, diagnostics* fallback,
                   const char* what, asio::any_completion_handler<void(error_code, Result)> h) {
    require_session(s, what);
    auto ex = st->consul.get_executor();
    auto* diag = diagnostics_route::target(route, fallback);
    auto op = loop(std::move(st), std::move(s), deadline, diag);
    if constexpr (is_optional<Result>::value)
        spawn_op(ex, std::move(op), std::move(h));
    else
        spawn_op(ex, std::move(op), std::move(h), waited_result<Result>);
}

} // namespace conclave::detail
