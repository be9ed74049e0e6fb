// SPDX-License-Identifier: BSL-1.0
// The TTL check a session can be bound to (session_config::health_ttl): registered on the
// local agent before the session is created, passed from the session's run, deregistered
// when the session ends.
#pragma once

#include "recipes/session/session_state.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace conclave::detail {

/// A new check ID for a check of TTL `ttl`: "conclave-session-<ttl in ms>ms-" and 16 random
/// hex digits. The TTL is in the ID because a process that resumes the session
/// (session::async_resume) must pass the check on its schedule, and Consul's session record
/// names the check but the agent does not tell its TTL.
std::string new_health_check_id(std::chrono::milliseconds ttl);

/// The TTL a new_health_check_id() names; nothing for any other check ID.
std::optional<std::chrono::milliseconds> health_ttl_of(std::string_view check_id);

/// Registers `id` as a passing TTL check of `cfg.health_ttl`, a node check of the client's
/// agent.
asio::awaitable<error_code> register_health_check(client consul, const session_config& cfg,
                                                  const std::string& id, diagnostics* diag);

/// Passes the check (output `note`). The caller times it: a pass that succeeds restarts the
/// check's TTL from when the agent received it, which is after its start.
asio::awaitable<error_code> pass_health_check(client consul, const std::string& id,
                                              std::chrono::steady_clock::time_point deadline,
                                              diagnostics* diag = nullptr);

/// Deregisters the check, bounded by `timeout`; failures are logged (the check then turns
/// critical on the agent and stays there, bound to no session).
asio::awaitable<void> deregister_health_check(client consul, std::string id,
                                              std::chrono::milliseconds timeout);

/// Passes the session's check on the schedule of its renew policy until the session is
/// lost; never completes otherwise (its caller cancels it with the renewals).
asio::awaitable<void> keep_check_passing(std::shared_ptr<session_state> s);

} // namespace conclave::detail
