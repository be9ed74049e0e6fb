// SPDX-License-Identifier: BSL-1.0
// Resuming a session another process handed over (session::async_resume,
// session_config::with_resume).
#pragma once

#include "recipes/session/session_state.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <utility>

namespace conclave::detail {

/// Renews session `id` and makes its state from Consul's record of it (its settings, and
/// the library's health check among its checks, passed once here to prove this client's
/// agent has it). `destroy_timeout` is the only setting not on record. Errors are
/// session::async_resume's, described in `diag` when given.
asio::awaitable<std::pair<error_code, std::shared_ptr<session_state>>>
resume_session(client consul, std::string id, std::chrono::milliseconds destroy_timeout,
               diagnostics* diag);

} // namespace conclave::detail
