// SPDX-License-Identifier: BSL-1.0
// Go duration strings ("15s", "1m30s", "250ms"), as Consul reads and writes them.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace conclave::codec::go {

struct duration_parse {
    std::optional<std::chrono::nanoseconds> value;
    std::string error; ///< Go's message, e.g. `time: invalid duration "abc"`
};

/// Parses like Go's time.ParseDuration (units ns, us, µs, ms, s, m, h; "0" allowed).
duration_parse parse_duration(std::string_view text);

/// Formats like Go's time.Duration.String(): "0s", "1.5s", "24h0m0s", "500ms", "1µs".
std::string format_duration(std::chrono::nanoseconds d);

/// The Go client's wire form of a blocking wait: integer milliseconds, "<n>ms"; a positive
/// duration under 1 ms is sent as "1ms".
std::string format_wait(std::chrono::nanoseconds d);

} // namespace conclave::codec::go
