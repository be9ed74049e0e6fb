// SPDX-License-Identifier: BSL-1.0
// Runs a command's coroutine on a single-threaded io_context.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

namespace conclave::cli {

/// Runs `body` until it and every operation it started have finished, and returns its
/// exit status. An exception escaping `body` is printed as "<command>: <what>" (status 1):
/// commands report expected failures themselves, so this is the last resort.
int run_command(boost::asio::io_context& ioc, boost::asio::awaitable<int> body,
                const char* command);

} // namespace conclave::cli
