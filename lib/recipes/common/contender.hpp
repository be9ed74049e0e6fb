// SPDX-License-Identifier: BSL-1.0
// Contender keys: a waiter's key in a line ordered by CreateIndex, held by its session (a
// fair lock's `<key>/.queue/`, a read-write lock's `<key>/.rwlock/`).
#pragma once

#include "recipes/common/deadline.hpp"
#include "recipes/session/session_state.hpp"

#include <conclave/client.hpp>
#include <conclave/consul/txn.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace conclave::detail {

/// `prefix` + `session` + "." + a number unique in this process: a key per waiter, so two
/// waiters with one session stand in line apart.
std::string unique_contender_key(const std::string& prefix, const std::string& session);

/// Runs `ops`, the write of a contender key held by `s` whose last operation reads it back,
/// in one transaction with an attempt's time (attempt_deadline). Its answer: the key's
/// CreateIndex (its place in line), or the acquire's error: the session's loss when Consul
/// says it is gone (then `s` counts as lost), errc::permission_denied when the ACLs refuse
/// the write, errc::conflict for any other refusal.
asio::awaitable<std::pair<error_code, std::uint64_t>>
write_contender(client c, std::vector<txn_op> ops, session_state& s, deadline_t deadline);

} // namespace conclave::detail
