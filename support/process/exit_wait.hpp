// SPDX-License-Identifier: BSL-1.0
// Waiting for a child's exit without reaping it (child_process::reap then takes the status):
// on the io_context (the CLI waits for its child among other events) or blocking with a
// limit (the tests). Both wait on a pidfd, so an exit is seen as it happens.
#pragma once

#include "process/child_process.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>

namespace conclave::programs {

/// Completes (with success) once the child has exited, on the calling coroutine's
/// executor; operation_aborted when cancelled.
boost::asio::awaitable<boost::system::error_code> async_wait_exit(const child_process& child);

/// Whether the child exits within `limit`.
bool wait_exit_for(const child_process& child, std::chrono::milliseconds limit);

} // namespace conclave::programs
