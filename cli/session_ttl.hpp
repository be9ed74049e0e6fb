// SPDX-License-Identifier: BSL-1.0
// The -ttl flag of `lock` and `elect`: the session's TTL, within the range Consul accepts.
#pragma once

#include <chrono>
#include <string>

namespace conclave::cli {

/// `consul lock`'s TTL, the default of -ttl.
inline constexpr std::chrono::milliseconds default_session_ttl{15000};

/// Empty when `ttl` is within Consul's range (10s to 24h, which Consul refuses outside of),
/// otherwise the message for the user.
std::string check_session_ttl(std::chrono::nanoseconds ttl);

/// The TTL in seconds for the child's CONCLAVE_SESSION_TTL: "15", or "10.5" when it is not
/// whole (a number a shell script can compare; fractions only for odd -ttl values).
std::string ttl_seconds(std::chrono::milliseconds ttl);

} // namespace conclave::cli
