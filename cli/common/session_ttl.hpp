// SPDX-License-Identifier: BSL-1.0
// The session flags of `lock` and `elect`: -ttl, within the range Consul accepts, and
// -lock-delay.
#pragma once

#include <chrono>
#include <string>

namespace conclave::cli {

/// `consul lock`'s TTL, the default of -ttl.
inline constexpr std::chrono::milliseconds default_session_ttl{15000};

/// Empty when `ttl` is within Consul's range (10s to 24h, which Consul refuses outside of),
/// otherwise the message for the user.
std::string check_session_ttl(std::chrono::nanoseconds ttl);

/// Consul's default lock-delay (`consul lock`'s), the default of -lock-delay.
inline constexpr std::chrono::milliseconds default_lock_delay{15000};

/// Empty when `delay` is a lock-delay to ask Consul for (0 disables it; Consul stores a
/// larger one than 60s but applies 60s), otherwise the message for the user.
std::string check_lock_delay(std::chrono::nanoseconds delay);

/// The TTL in seconds for the child's CONCLAVE_SESSION_TTL: "15", or "10.5" when it is not
/// whole (a number a shell script can compare; fractions only for odd -ttl values).
std::string ttl_seconds(std::chrono::milliseconds ttl);

} // namespace conclave::cli
