// SPDX-License-Identifier: BSL-1.0
// Deadlines of the recipes' steps: sleeping up to one, the time left until one.
#pragma once

#include <conclave/error.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <optional>

namespace conclave::detail {

namespace asio = boost::asio;

using clock = std::chrono::steady_clock;
/// An optional deadline: none waits as long as it takes.
using deadline_t = std::optional<clock::time_point>;

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
