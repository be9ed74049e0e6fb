// SPDX-License-Identifier: BSL-1.0
// What `lock` and `elect` share: the command they run while they hold a grant, the
// session that holds it, and the flags that set both (-name aside: lock's session name is
// elect's published value).
#pragma once

#include "cli/common/flags.hpp"
#include "cli/common/http_flags.hpp"
#include "cli/common/jeopardy_relay.hpp"
#include "cli/common/session_ttl.hpp"

#include <conclave/session.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::cli {

struct held_command_settings {
    std::vector<std::string> command; ///< the child's arguments as given
    std::string session_name;
    std::chrono::milliseconds ttl{default_session_ttl}; ///< the session's (-ttl)
    /// The session's (-lock-delay); `consul lock`'s session has Consul's default, 15 s.
    std::chrono::milliseconds lock_delay{default_lock_delay};
    bool shell = true;
    bool pass_stdin = false;
    bool verbose = false;
    jeopardy_signals signals; ///< -jeopardy-signal, -recovery-signal
    /// -health-ttl: the session is bound to a TTL check of this TTL (0: none).
    std::chrono::milliseconds health_ttl{0};
    /// -session-file: where the session's ID is kept for a successor (empty: none).
    std::string session_file;
};

/// -ttl and -lock-delay as given (checked by the command, in its order, then stored), and
/// the flags that go straight into held_command_settings.
struct held_command_flags {
    std::chrono::nanoseconds ttl{default_session_ttl};
    std::chrono::nanoseconds lock_delay{default_lock_delay};
    std::chrono::nanoseconds health_ttl{0};

    http_flags http; ///< -http-addr, -token and the other flags of the connection

    /// -ttl, -lock-delay, -shell, -pass-stdin, -verbose, -jeopardy-signal, -recovery-signal
    /// and the HTTP flags.
    void add_to(flag_set& flags, held_command_settings& cfg);
    /// Parses the command line (parse_or_usage) of a command whose help is `usage_head`
    /// followed by held_command_help(`held`).
    std::optional<int> parse(flag_set& flags, args a, const char* usage_head, std::string_view held,
                             std::vector<std::string_view>& rest) const;
    /// The checked durations into `cfg`.
    void store(held_command_settings& cfg) const;
    /// Empty when -health-ttl is usable, otherwise the message for the user.
    std::string check_health_ttl() const;
};

/// The session both commands create: `consul lock`'s (TTL -ttl, -lock-delay, bound to the
/// node's serfHealth), with `behavior`, the -health-ttl check, and resuming the session
/// -session-file names.
session_config held_session_config(const held_command_settings& cfg, session_behavior behavior);

/// The help of the options held_command_flags adds after -lock-delay, from -shell to -help
/// (the last lines of lock's and elect's usage texts): `held` names what is held ("lock",
/// "leadership").
/// Without `session_file`, the -session-file lines are left out (`group join`, `barrier
/// enter`: no hand-over).
std::string held_command_help(std::string_view held, bool session_file = true);

/// Prints `problem` (a check_session_ttl() or check_lock_delay() answer) to stderr when it
/// names one: whether the command must stop with exit_code::error.
bool refused(const std::string& problem);

/// "<what> for '<command joined with spaces>' at '<key>'": the default session name.
std::string session_name_for(std::string_view what, const std::vector<std::string>& command,
                             std::string_view key);

} // namespace conclave::cli
