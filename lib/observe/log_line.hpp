// SPDX-License-Identifier: BSL-1.0
// Log lines built only when their level is enabled: a disabled line costs one comparison.
#pragma once

#include <conclave/error.hpp>
#include <conclave/log.hpp>

#include <chrono>
#include <concepts>
#include <string>
#include <string_view>

namespace conclave::detail {

inline void append(std::string& out, std::string_view s) {
    out += s;
}
inline void append(std::string& out, const char* s) {
    out += s;
}
inline void append(std::string& out, const std::string& s) {
    out += s;
}
template <std::integral T>
void append(std::string& out, T v) {
    out += std::to_string(v);
}
/// Durations as milliseconds with one decimal ("12.5 ms").
inline void append(std::string& out, std::chrono::nanoseconds d) {
    const auto tenths = d.count() / 100000;
    out += std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " ms";
}
inline void append(std::string& out, const error_code& ec) {
    out += ec.message();
}

/// Writes a line made of `parts` if `level` is enabled; nothing is formatted otherwise.
template <class... Parts>
void log_line(const logger& log, log_level level, const Parts&... parts) {
    if (!log.enabled(level))
        return;
    std::string line;
    (append(line, parts), ...);
    log.write(level, line);
}

} // namespace conclave::detail
