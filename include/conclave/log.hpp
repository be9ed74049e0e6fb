// SPDX-License-Identifier: BSL-1.0
/// \file
/// The logger hook: where a client and the recipes on it write what they do, line by line.
#pragma once

#include <conclave/detail/export.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace conclave {

/// Severity of a log line, from the most detailed to none.
enum class log_level {
    trace,   ///< every blocking query's return, every connection opened
    debug,   ///< every request: method, path and query, status, time taken
    info,    ///< sessions created and destroyed, grants acquired, leadership that begins or ends
    warning, ///< failed renewals, jeopardy, failed acquires, connections refused by Consul
    error,   ///< losses: a session, lock or permit that ended without our release
    off,     ///< nothing
};

/// "trace", "debug", "info", "warning", "error", "off".
CONCLAVE_DECL std::string_view to_string(log_level level) noexcept;

/// The level named `name` (one of the above, or "warn"); nothing for any other text.
CONCLAVE_DECL std::optional<log_level> parse_log_level(std::string_view name) noexcept;

/// Where log lines go: a sink, called with every line at or above a threshold.
///
/// A line below the threshold costs one comparison: the library checks enabled() before it
/// builds the text. The sink is called on the executor of the client that logs (or of the
/// operation, for recipes), once per line, with the line without a trailing newline; it must
/// not block. Lines never carry the ACL token, nor request headers or bodies; they do carry
/// keys, session IDs and request paths.
///
/// A default-constructed logger is off. Copies share one sink (the client keeps copies of
/// its config): a sink with state sees every line.
class CONCLAVE_DECL logger {
public:
    using sink_type = std::function<void(log_level, std::string_view)>;

    logger() = default;
    logger(log_level threshold, sink_type sink)
        : threshold_(threshold)
        , sink_(sink ? std::make_shared<const sink_type>(std::move(sink)) : nullptr) {}

    /// Writes lines to standard error as "<prefix>: <level>: <text>", each in one write.
    static logger to_stderr(log_level threshold, std::string prefix = "conclave");

    /// Whether a line at `level` reaches the sink.
    bool enabled(log_level level) const noexcept {
        return level >= threshold_ && level != log_level::off && sink_;
    }
    log_level threshold() const noexcept { return sink_ ? threshold_ : log_level::off; }

    /// Passes `line` to the sink if `level` is enabled.
    void write(log_level level, std::string_view line) const {
        if (enabled(level))
            (*sink_)(level, line);
    }

private:
    log_level threshold_ = log_level::off;
    std::shared_ptr<const sink_type> sink_;
};

} // namespace conclave
