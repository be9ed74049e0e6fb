// SPDX-License-Identifier: BSL-1.0
// async_wait_health_change of a session and of the grants held with it (hold_health).
#pragma once

#include "recipes/common/grant.hpp"
#include "recipes/session/session_state.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <utility>

namespace conclave::detail {

/// Waits until the health of `grant` (or, when it is null, of `session`) differs from
/// `seen`, and returns the new one. Woken by the session's renewals and loss, the grant's
/// loss, and the moments the health changes by time alone (jeopardy, the local deadline).
asio::awaitable<std::pair<error_code, hold_health>>
wait_health_change(std::shared_ptr<session_state> session, std::shared_ptr<grant_state> grant,
                   hold_health seen);

} // namespace conclave::detail
