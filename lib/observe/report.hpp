// SPDX-License-Identifier: BSL-1.0
// What the recipes report to their client's logger and observer: each event in one place,
// its log line and its observer call together.
#pragma once

#include "observe/log_line.hpp"

#include <conclave/client.hpp>
#include <conclave/observer.hpp>

#include <chrono>
#include <string_view>

namespace conclave::detail {

const logger& log_of(const client& c) noexcept;
/// The client's observer, or null.
observer* observer_of(const client& c) noexcept;

/// A session or grant is now `h` (jeopardy: warning; lost: error; held again: info).
void report_health(const client& c, hold_kind kind, std::string_view name, hold_health h,
                   const error_code& reason);

/// A renewal of `session` ended with `ec` after `took` (a failure: warning).
void report_renewal(const client& c, std::string_view session, const error_code& ec,
                    std::chrono::nanoseconds took);

/// An acquire ended (granted: info; failed: warning; timed out, cancelled: debug).
void report_acquire(const client& c, const acquire_event& e);

/// A leadership began or ended (info).
void report_leadership(const client& c, const leadership_event& e);

} // namespace conclave::detail
