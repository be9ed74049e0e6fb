// SPDX-License-Identifier: BSL-1.0
#include "cli/common/held_command.hpp"

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
    http.add_to(flags);
}

void held_command_flags::store(held_command_settings& cfg) const {
    cfg.ttl = std::chrono::duration_cast<std::chrono::milliseconds>(ttl);
    cfg.lock_delay = std::chrono::duration_cast<std::chrono::milliseconds>(lock_delay);
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

std::string held_command_help(std::string_view held) {
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
  -verbose                 Report each step on stderr.
  -help                    Show this help.

)");
    return text;
}

} // namespace conclave::cli
