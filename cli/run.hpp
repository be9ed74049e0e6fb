// SPDX-License-Identifier: BSL-1.0
// Runs a command's coroutine on a single-threaded io_context.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

namespace conclave::cli {

/// Runs `body` and returns its exit status as soon as it has finished. What it started and
/// did not wait for is abandoned then (its sockets close with the process): a command's
/// cleanup awaits every request that matters, and nothing else may keep the process, such
/// as the blocking read that watched a lock, which the release outdated but whose answer
/// may still be on its way. An exception escaping `body` is printed as "<command>: <what>"
/// (status 1): commands report expected failures themselves, so this is the last resort.
int run_command(boost::asio::io_context& ioc, boost::asio::awaitable<int> body,
                const char* command);

} // namespace conclave::cli
