// SPDX-License-Identifier: BSL-1.0
// What the recipe commands (counter, latch, barrier, group) share: a failure's text, the
// client and signals they run with, and a wait bounded by -timeout and SIGINT/SIGTERM.
#pragma once

#include "cli/common/flags.hpp"
#include "cli/common/http_flags.hpp"
#include "cli/exit_codes.hpp"
#include "cli/run.hpp"

#include <conclave/client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <csignal>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace conclave::cli {

inline constexpr auto recipe_tuple_awaitable = boost::asio::as_tuple(boost::asio::use_awaitable);

/// A recipe's failure in words: Consul's (consul_error: the code, Consul's text, the
/// missing permission, where Consul was looked for) and the recipe's (which key, held by
/// what).
std::string recipe_failure(const error_code& ec, const diagnostics& d, const client& consul);

/// Prints "Error! <recipe_failure>" to stderr: returns exit_code::error.
int report_failure(const error_code& ec, const diagnostics& d, const client& consul);

/// Runs `body(client&, signal_set&)` (an awaitable<int>) with SIGINT/SIGTERM caught first
/// (so that they never kill the command before it cleans up) and a client from the
/// environment and the HTTP flags; returns its exit status.
template <class Body>
int run_with_client(const http_flags& http, const flag_set& flags, const char* name, Body body) {
    boost::asio::io_context ioc;
    boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
    std::optional<client> consul;
    if (!http.open_client(flags, ioc, consul))
        return exit_code::error;
    return run_command(ioc, body(*consul, signals), name);
}

/// How a wait bounded by a timeout and signals ended.
struct bounded_outcome {
    enum class how { done, timed_out, signalled };
    how ended = how::done;
    error_code ec; ///< the wait's own outcome (how::done)
    int signal = 0;
};

/// Races `op` with `timeout` (0: none) and the next SIGINT/SIGTERM; the losers are
/// cancelled.
boost::asio::awaitable<bounded_outcome> bounded_wait(boost::asio::awaitable<error_code> op,
                                                     std::chrono::nanoseconds timeout,
                                                     boost::asio::signal_set& signals);

/// The error of a `void(error_code)` operation started with recipe_tuple_awaitable, as an
/// awaitable<error_code> (an arm for bounded_wait).
boost::asio::awaitable<error_code> error_of(boost::asio::awaitable<std::tuple<error_code>> op);

/// bounded_wait, then exit_code::ok when `op` succeeded, bounded_failure's status
/// otherwise.
boost::asio::awaitable<int> wait_or_fail(boost::asio::awaitable<error_code> op,
                                         std::chrono::nanoseconds timeout,
                                         boost::asio::signal_set& signals, std::string what,
                                         const diagnostics& d, const client& consul);

/// The exit status of a bounded wait that did not end in success, its reason on stderr:
/// "Timeout: <what> within <timeout>" (exit_code::timed_out), "Shutdown triggered during
/// <what>" (128 + the signal), or the failure (exit_code::error).
int bounded_failure(const bounded_outcome& o, const std::string& what,
                    std::chrono::nanoseconds timeout, const diagnostics& d, const client& consul);

/// The operation a command's first argument names, one of `ops` (which `choices` lists in
/// words: "create, count-down, get or wait"), in `op`. Otherwise the exit status: the help
/// on stdout for -help (0); "Error! Missing operation: <choices>" or "Error! Unknown
/// operation '<op>': use <choices>" and the help on stderr (1).
std::optional<int> choose_operation(args a, std::initializer_list<std::string_view> ops,
                                    const char* choices, const std::string& usage,
                                    std::string_view& op);

/// Empty when 1 <= `value` <= `most`; otherwise "Error! -<flag> must be between 1 and
/// <most> (got <value>)" and the usage: exit 1. For the counts given as flags.
std::optional<int> check_positive(std::int64_t value, std::int64_t most, const char* flag,
                                  const char* usage);

/// The flags of a command that runs a child (held_command_flags, -name, -child-exit-code):
/// only one of its operations takes them.
inline constexpr const char* child_flag_names[] = {
    "name",    "ttl",        "lock-delay",      "shell",           "pass-stdin",
    "verbose", "health-ttl", "jeopardy-signal", "recovery-signal", "child-exit-code"};

/// The flag only `lock` and `elect` take: the others have no hand-over.
inline constexpr const char* hand_over_flag_names[] = {"session-file"};

/// Empty when none of `names` was given; otherwise "Error! -<flag> is for <operation>" and
/// the usage: exit 1.
template <class Names>
std::optional<int> only_for(const flag_set& flags, const Names& names, const char* operation,
                            const std::string& usage) {
    for (const char* name : names)
        if (flags.was_set(name))
            return usage_error("Error! -" + std::string(name) + " is for " + operation,
                               usage.c_str());
    return std::nullopt;
}

/// Empty when `rest` is one argument; otherwise "Error! Missing <what> argument" or "Too
/// many arguments (expected 1, got N)" and the usage: exit 1.
std::optional<int> one_argument(const std::vector<std::string_view>& rest, const char* what,
                                const std::string& usage);

/// `given` cleaned (clean_key_path) into `prefix`; when nothing is left, "Error! Key prefix
/// '<given>' names no key" and the usage: exit 1.
std::optional<int> key_prefix(std::string_view given, std::string& prefix,
                              const std::string& usage);

/// Refuses a negative -timeout, as `lock` does ("Timeout must be positive").
bool bad_timeout(std::chrono::nanoseconds timeout);

} // namespace conclave::cli
