// Runs one asynchronous operation with a deadline.
#pragma once

#include <conclave/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <optional>
#include <utility>

namespace conclave::detail {

namespace asio = boost::asio;

/// Awaits `op` (a deferred operation completing with `void(error_code, T)`) until
/// `deadline`. If the deadline comes first, `op` is cancelled and the result is
/// errc::timeout. Cancelling the calling coroutine cancels `op` (the parallel group
/// forwards it), and the call then completes with operation_aborted.
template <class T, class DeferredOp>
asio::awaitable<std::pair<error_code, T>>
with_deadline(DeferredOp op, std::chrono::steady_clock::time_point deadline) {
    asio::steady_timer timer{co_await asio::this_coro::executor, deadline};
    auto wait = timer.async_wait(asio::deferred);
    auto group = asio::experimental::make_parallel_group(std::move(op), std::move(wait));
    auto [order, ec, value, timer_ec] =
        co_await group.async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
    (void)timer_ec;
    if (order[0] == 1)
        co_return std::pair<error_code, T>{make_error_code(errc::timeout), T{}};
    co_return std::pair<error_code, T>{ec, std::move(value)};
}

/// Like with_deadline when a deadline is given; otherwise just awaits `op` (the client's
/// own request timeout still applies).
template <class T, class DeferredOp>
asio::awaitable<std::pair<error_code, T>>
with_optional_deadline(DeferredOp op, std::optional<std::chrono::steady_clock::time_point> d) {
    if (d)
        co_return co_await with_deadline<T>(std::move(op), *d);
    auto [ec, value] = co_await std::move(op)(asio::as_tuple(asio::use_awaitable));
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

} // namespace conclave::detail
