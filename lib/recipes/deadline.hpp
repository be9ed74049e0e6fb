// Runs one asynchronous operation with a deadline.
#pragma once

#include <conclave/error.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
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

} // namespace conclave::detail
