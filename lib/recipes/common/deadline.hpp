// SPDX-License-Identifier: BSL-1.0
// Runs one asynchronous operation with a deadline.
#pragma once

#include <conclave/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>

namespace conclave::detail {

namespace asio = boost::asio;

/// Awaits `op` (a deferred operation completing with `void(error_code, T)`) until
/// `deadline`. If the deadline comes first, `op` is cancelled and the result is
/// errc::timeout. Cancelling the calling coroutine cancels `op`, and the call then
/// completes with operation_aborted.
///
/// Why not a parallel_group of `op` and the timer: that costs a shared group state, two
/// cancellation signals and a deferred wrapper per call, and a lock cycle calls this for
/// every request. Here the timer's handler cancels `op` through one signal, and the
/// coroutine's own cancellation is forwarded to the same signal.
template <class T, class DeferredOp>
asio::awaitable<std::pair<error_code, T>>
with_deadline(DeferredOp op, std::chrono::steady_clock::time_point deadline) {
    // Shared with the timer's handler, which may run after this frame is gone (a timer
    // that expired just as `op` completed has its handler queued already).
    struct race {
        asio::cancellation_signal cancel_op;
        bool finished = false;
        bool timed_out = false;
    };
    auto state = std::make_shared<race>();
    asio::steady_timer timer{co_await asio::this_coro::executor, deadline};
    timer.async_wait([state](const error_code& ec) {
        if (ec || state->finished)
            return;
        state->timed_out = true;
        state->cancel_op.emit(asio::cancellation_type::all);
    });

    // The slot the coroutine hands to the operations it awaits: `op` is bound to our signal
    // instead, so a cancellation of the coroutine is passed on to it from here.
    asio::cancellation_state outer_state = co_await asio::this_coro::cancellation_state;
    auto outer = outer_state.slot();
    struct forwarding {
        asio::cancellation_slot slot;
        ~forwarding() {
            if (slot.is_connected())
                slot.clear();
        }
    } forward{outer};
    if (outer.is_connected())
        outer.assign([state](asio::cancellation_type type) { state->cancel_op.emit(type); });

    auto token =
        asio::bind_cancellation_slot(state->cancel_op.slot(), asio::as_tuple(asio::use_awaitable));
    auto [ec, value] = co_await std::move(op)(std::move(token));
    state->finished = true;
    timer.cancel();
    // Past the deadline and ended by it. (An operation that completed just as the timer
    // fired keeps its own result: a success is a success.)
    if (state->timed_out && ec)
        co_return std::pair<error_code, T>{make_error_code(errc::timeout), T{}};
    co_return std::pair<error_code, T>{ec, std::move(value)};
}

/// Sleeps for `d` (never past `limit` when given).
inline asio::awaitable<void>
sleep_for(std::chrono::steady_clock::duration d,
          std::optional<std::chrono::steady_clock::time_point> limit = std::nullopt) {
    auto until = std::chrono::steady_clock::now() + d;
    if (limit && *limit < until)
        until = *limit;
    asio::steady_timer timer{co_await asio::this_coro::executor, until};
    co_await timer.async_wait(asio::use_awaitable);
}

/// The time until `deadline`, at least 1 ms (a request's timeout; 0 would mean none).
inline std::chrono::milliseconds time_left(std::chrono::steady_clock::time_point deadline) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return std::max(left, std::chrono::milliseconds{1});
}

/// Whether an optional deadline has passed (no deadline never passes).
inline bool past(const std::optional<std::chrono::steady_clock::time_point>& d) {
    return d && std::chrono::steady_clock::now() >= *d;
}

} // namespace conclave::detail
