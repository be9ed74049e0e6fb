// SPDX-License-Identifier: BSL-1.0
#include "codec/duration.hpp"
#include "session_ttl.hpp"

namespace conclave::cli {

namespace {

// Consul's bounds (session_ttl_min, and its fixed maximum).
constexpr std::chrono::seconds min_ttl{10};
constexpr std::chrono::hours max_ttl{24};

} // namespace

std::string check_session_ttl(std::chrono::nanoseconds ttl) {
    if (ttl >= min_ttl && ttl <= max_ttl)
        return {};
    return "Session TTL must be between 10s and 24h, not " + codec::format_go_duration(ttl);
}

} // namespace conclave::cli
