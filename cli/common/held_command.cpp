// SPDX-License-Identifier: BSL-1.0
#include "cli/common/held_command.hpp"
#include "cli/common/session_file.hpp"

#include <cstdio>

namespace conclave::cli {

void held_command_flags::add_to(flag_set& flags, held_command_settings& cfg) {
    flags.add_duration("ttl", &ttl);
    flags.add_duration("lock-delay", &lock_delay);
    flags.add_bool("shell", &cfg.shell);
    flags.add_bool("pass-stdin", &cfg.pass_stdin);
    flags.add_bool("verbose", &cfg.verbose);
    flags.add_signal("jeopardy-signal", &cfg.signals.jeopardy);
    flags.add_signal("recovery-signal", &cfg.signals.recovery);
    flags.add_duration("health-ttl", &health_ttl);
    flags.add_string("session-file", &cfg.session_file);
    http.add_to(flags);
}

void held_command_flags::store(held_command_settings& cfg) const {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    cfg.ttl = duration_cast<milliseconds>(ttl);
    cfg.lock_delay = duration_cast<milliseconds>(lock_delay);
    cfg.health_ttl = duration_cast<milliseconds>(health_ttl);
}

std::string held_command_flags::check_health_ttl() const {
    if (health_ttl < std::chrono::nanoseconds::zero() ||
        (health_ttl > std::chrono::nanoseconds::zero() && health_ttl < std::chrono::seconds{1}))
        return "-health-ttl must be 0 (no check) or at least 1s";
    return {};
}

session_config held_session_config(const held_command_settings& cfg, session_behavior behavior) {
    auto scfg = session_config{}
                    .with_name(cfg.session_name)
                    .with_ttl(cfg.ttl)
                    .with_lock_delay(cfg.lock_delay)
                    .with_behavior(behavior)
                    .with_node_checks(std::vector<std::string>{"serfHealth"})
                    .with_health_ttl(cfg.health_ttl);
    return resuming_from(std::move(scfg), cfg.session_file);
}

bool refused(const std::string& problem) {
    if (problem.empty())
        return false;
    std::fprintf(stderr, "%s\n", problem.c_str());
    return true;
}

std::string session_name_for(std::string_view what, const std::vector<std::string>& command,
                             std::string_view key) {
    std::string joined;
    for (const auto& part : command)
        joined += (joined.empty() ? "" : " ") + part;
    return std::string(what) + " for '" + joined + "' at '" + std::string(key) + "'";
}

std::optional<int> held_command_flags::parse(flag_set& flags, args a, const char* usage_head,
                                             std::string_view held,
                                             std::vector<std::string_view>& rest) const {
    const std::string usage = usage_head + held_command_help(held);
    return parse_or_usage(flags, a, usage.c_str(), rest);
}

std::string held_command_help(std::string_view held, bool session_file) {
    std::string text =
        R"(  -shell                   Run the command with $SHELL -c (/bin/sh when SHELL is unset),
                           its arguments joined with spaces. Default true; -shell=false
                           runs the arguments directly (PATH lookup).
  -pass-stdin              Give the command this process's stdin (default: /dev/null).
  -jeopardy-signal=<sig>   Signal sent to the command (its first process) when the
                           )";
    text.append(held).append(R"( is in jeopardy: renewals of the session failing or
                           late, so it may be lost within the time left. USR1, SIGUSR1
                           or a number; default none. A line on stderr either way.
  -recovery-signal=<sig>   Signal sent when a renewal succeeds again. Default none.
  -health-ttl=<duration>   Bind the session to a TTL check of this TTL on the local
                           agent, passed by conclave every third of it: when conclave
                           stalls or dies, the )");
    text.append(held).append(R"( is freed about this long after,
                           not 2 x -ttl. At least 1s; default 0 (none).
)");
    if (session_file) {
        text.append(
            R"(  -session-file=<path>     Keep the session's ID in this file, for a binary upgrade:
                           on SIGUSR2, conclave stops the command and exits 0 without
                           releasing the )");
        text.append(held).append(R"( or ending the session; a conclave started
                           with the same file within -ttl resumes the session and
                           holds on with the same token (no lock-delay, no election).
                           Any other exit ends the session and removes the file.
)");
    }
    text.append(R"(  -verbose                 Report each step on stderr.
  -help                    Show this help.

)");
    return text;
}

} // namespace conclave::cli
