// SPDX-License-Identifier: BSL-1.0
// The /v1/txn endpoint as a coroutine for the recipes.
#pragma once

#include <conclave/client.hpp>
#include <conclave/consul/txn.hpp>
#include <conclave/error.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <optional>
#include <utility>
#include <vector>

namespace conclave::detail {

/// What client::async_txn does, awaited in the caller's coroutine. The recipes send a
/// transaction per acquire and per release: through async_txn each paid a co_spawn (its
/// frames, a type-erased handler, a bound cancellation slot, a dispatched completion) and,
/// with a deadline, a timer and a cancellation signal racing the request.
///
/// `deadline` bounds the request (waiting for a connection included) as the client's own
/// request timeout does, and ends it with errc::timeout. Cancelling the caller cancels
/// the request; it then completes with operation_aborted, as a value. (Like any co_await,
/// the call itself throws operation_aborted if the caller was cancelled before it and
/// still throws on cancellation; it throws nothing else.)
asio::awaitable<std::pair<error_code, txn_result>>
txn_call(const client& c, std::vector<txn_op> ops,
         std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

} // namespace conclave::detail
