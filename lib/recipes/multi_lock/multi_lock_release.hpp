// SPDX-License-Identifier: BSL-1.0
// Releasing a multi-lock's keys.
#pragma once

#include "recipes/multi_lock/multi_lock_state.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <string>
#include <utility>

namespace conclave::detail {

/// Unlocks every key of `m` held by `session`, in one transaction; when that is refused (a
/// key no longer names the session: deleted, taken, released), each key on its own, so that
/// none stays held. A key that a live grant of this process other than `self` holds (a
/// lock's lease with the same session, which took it over) is left to it. Tells the hubs
/// what was written, or to read again. Bounded by `until`. Returns the transport error of
/// the first transaction, if any (the outcome is then unknown), and whether it committed for
/// every key (all were still held by `session`, and none was left to another grant).
asio::awaitable<std::pair<error_code, bool>>
release_keys(multi_lock_state& m, const std::string& session, const grant_state* self,
             std::chrono::steady_clock::time_point until);

} // namespace conclave::detail
