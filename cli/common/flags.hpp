// SPDX-License-Identifier: BSL-1.0
// Command-line flags with the syntax and error texts of Go's `flag` package, which the
// Consul CLI uses: scripts written for `consul lock` get the same parse and the same
// messages from `conclave lock`.
#pragma once

#include "cli/commands.hpp"

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::cli {

/// The flags of one command, bound to variables.
///
/// Syntax (Go's flag.FlagSet): `-name`, `--name`, `-name=value`, and `-name value` for
/// non-boolean flags (a boolean takes only `-name=value`). Parsing stops at the first
/// argument that is not a flag (or `-` alone), or after `--`, which is consumed.
/// `-h`, `-help` and `--help` ask for the help text.
class flag_set {
public:
    void add_bool(std::string name, bool* target);
    void add_string(std::string name, std::string* target);
    /// Go's int (strconv.ParseInt with base 0): decimal, or 0x / 0o / 0b / leading-0 octal,
    /// with an optional sign and underscores between digits.
    void add_int(std::string name, std::int64_t* target);
    /// Go's uint64 (same bases, no sign).
    void add_uint(std::string name, std::uint64_t* target);
    /// Go's time.ParseDuration ("10s", "1m30s", "0"); negative values are accepted here,
    /// the command decides what they mean.
    void add_duration(std::string name, std::chrono::nanoseconds* target);
    /// A signal: "USR1", "SIGUSR1" or a number (signal_name.hpp); stored as its number.
    void add_signal(std::string name, int* target);

    enum class outcome { ok, help, error };
    struct result {
        outcome status = outcome::ok;
        std::string error;                  ///< Go's message, without trailing newline
        std::vector<std::string_view> rest; ///< the arguments after the flags
    };
    result parse(args a);

    /// Whether the flag appeared on the command line (last parse).
    bool was_set(const std::string& name) const { return set_.count(name) != 0; }

private:
    enum class kind { boolean, string, integer, unsigned_integer, duration, signal };
    struct flag {
        std::string name;
        kind type;
        void* target;
    };
    const flag* find(std::string_view name) const;
    std::string assign(const flag& f, std::string_view value);

    std::vector<flag> flags_;
    std::set<std::string> set_;
};

} // namespace conclave::cli
