// SPDX-License-Identifier: BSL-1.0
// Releasing a lock key: the bounded undo of an acquire, and a holder's release that hands
// the key to the next local waiter in the same transaction.
#pragma once

#include "recipes/lock/key_hub.hpp"
#include "recipes/lock/lock_state.hpp"

#include <boost/asio/awaitable.hpp>

namespace conclave::detail {

/// Releases `key` if `session` holds it (the undo of an acquire whose outcome is unknown).
/// Bounded by `timeout`; never fails (a lock we could not release ends with the session).
asio::awaitable<void> release_for(std::shared_ptr<key_hub> hub, std::string session,
                                  std::string value, std::chrono::milliseconds timeout);

/// The holder's release. When a local waiter is at the front of the hub's queue, the same
/// transaction that releases the key acquires it for that waiter (one round trip per
/// handoff, and the key is never free for a herd to race for). In fair mode, when the
/// oldest contender waits in another process, the transaction hands the key to it the same
/// way. Otherwise (or with `hand_over` false) a plain release. Transport error: unknown
/// outcome, the lease stays held and the caller may retry.
asio::awaitable<error_code> release_lease(std::shared_ptr<lease_state> L, bool hand_over = true);

} // namespace conclave::detail
