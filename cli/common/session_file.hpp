// SPDX-License-Identifier: BSL-1.0
// -session-file of `lock` and `elect`: where a process keeps its session's ID, so that after a
// hand-over (SIGUSR2: exit without releasing) the next process resumes the session and holds
// on with the same fencing token, with no lock-delay and no election.
#pragma once

#include <conclave/session.hpp>

#include <csignal>
#include <string>

namespace conclave::cli {

/// The signal that makes `lock` and `elect` hand their session over and exit.
inline constexpr int hand_over_signal = SIGUSR2;

/// The session ID kept in `path` (its first line), or "" when there is no such file or
/// `path` is empty.
std::string read_session_file(const std::string& path);

/// Writes `id` to `path` atomically (a new file renamed over it): "" on success, else the
/// message for the user. Nothing to do for an empty `path`.
std::string write_session_file(const std::string& path, const std::string& id);

/// Removes `path` (a session that ended leaves nothing to resume). Nothing for an empty one.
void remove_session_file(const std::string& path);

/// `cfg` set to resume the session `path` names, if any (session_config::with_resume).
session_config resuming_from(session_config cfg, const std::string& path);

} // namespace conclave::cli
