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

} // namespace conclave::cli
