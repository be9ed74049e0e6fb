// SPDX-License-Identifier: BSL-1.0
// Releasing a permit, handing its slot to the next local waiter in the same transaction.
#pragma once

#include "recipes/semaphore/semaphore_state.hpp"

#include <boost/asio/awaitable.hpp>

namespace conclave::detail {

/// The holder's release: one transaction takes the session out of `.lock`'s holders (CAS)
/// and deletes its contender key; when a local waiter is queued with its contender key
/// written, the same CAS puts that waiter in the freed slot (one request per handoff; the
/// slot is never free for a herd to race for). Retried after lost CAS races until the
/// client's request timeout. Transport error: unknown outcome, the permit stays held and
/// the caller may retry.
asio::awaitable<error_code> release_permit(std::shared_ptr<permit_state> P);

} // namespace conclave::detail
