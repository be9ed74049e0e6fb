// SPDX-License-Identifier: BSL-1.0
#include <conclave/log.hpp>

#include <cstdio>
#include <memory>

namespace conclave {

std::string_view to_string(log_level level) noexcept {
    switch (level) {
    case log_level::trace:
        return "trace";
    case log_level::debug:
        return "debug";
    case log_level::info:
        return "info";
    case log_level::warning:
        return "warning";
    case log_level::error:
        return "error";
    case log_level::off:
        break;
    }
    return "off";
}

std::optional<log_level> parse_log_level(std::string_view name) noexcept {
    for (auto l : {log_level::trace, log_level::debug, log_level::info, log_level::warning,
                   log_level::error, log_level::off})
        if (name == to_string(l))
            return l;
    if (name == "warn")
        return log_level::warning;
    return std::nullopt;
}

logger logger::to_stderr(log_level threshold, std::string prefix) {
    return logger{threshold, [prefix = std::move(prefix)](log_level level, std::string_view line) {
                      // One write per line, so that lines of several threads or processes
                      // sharing the stream do not interleave.
                      std::string text = prefix;
                      text += ": ";
                      text += to_string(level);
                      text += ": ";
                      text += line;
                      text += '\n';
                      std::fwrite(text.data(), 1, text.size(), stderr);
                  }};
}

} // namespace conclave
