// SPDX-License-Identifier: BSL-1.0
#include "cli/common/session_ttl.hpp"
#include "codec/go/duration.hpp"

namespace conclave::cli {

namespace {

// Consul's bounds (session_ttl_min, and its fixed maximum).
constexpr std::chrono::seconds min_ttl{10};
constexpr std::chrono::hours max_ttl{24};

} // namespace

std::string check_session_ttl(std::chrono::nanoseconds ttl) {
    if (ttl >= min_ttl && ttl <= max_ttl)
        return {};
    return "Session TTL must be between 10s and 24h, not " + codec::go::format_duration(ttl);
}

std::string check_lock_delay(std::chrono::nanoseconds delay) {
    if (delay.count() < 0)
        return "Lock delay must not be negative";
    return {};
}

std::string ttl_seconds(std::chrono::milliseconds ttl) {
    const auto ms = ttl.count();
    std::string text = std::to_string(ms / 1000);
    if (const auto frac = ms % 1000; frac != 0) {
        std::string digits = std::to_string(1000 + frac).substr(1); // "005" for 5 ms
        while (digits.back() == '0')
            digits.pop_back();
        text += "." + digits;
    }
    return text;
}

} // namespace conclave::cli
