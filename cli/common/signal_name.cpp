// SPDX-License-Identifier: BSL-1.0
#include "cli/common/signal_name.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <csignal>
#include <utility>

namespace conclave::cli {

namespace {

// The signals kill(1) names on Linux (SIGKILL and SIGSTOP too: refusing them would only
// surprise; a child killed by its jeopardy signal is what the user asked for).
constexpr std::array<std::pair<const char*, int>, 29> names{{
    {"HUP", SIGHUP},   {"INT", SIGINT},       {"QUIT", SIGQUIT}, {"ILL", SIGILL},
    {"TRAP", SIGTRAP}, {"ABRT", SIGABRT},     {"BUS", SIGBUS},   {"FPE", SIGFPE},
    {"KILL", SIGKILL}, {"USR1", SIGUSR1},     {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},
    {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},     {"TERM", SIGTERM}, {"STKFLT", SIGSTKFLT},
    {"CHLD", SIGCHLD}, {"CONT", SIGCONT},     {"STOP", SIGSTOP}, {"TSTP", SIGTSTP},
    {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},     {"URG", SIGURG},   {"XCPU", SIGXCPU},
    {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH},
    {"SYS", SIGSYS},
}};

bool same_name(std::string_view given, std::string_view name) {
    if (given.size() != name.size())
        return false;
    for (std::size_t i = 0; i < given.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(given[i])) != name[i])
            return false;
    return true;
}

} // namespace

std::optional<int> parse_signal(std::string_view text) {
    if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front()))) {
        int sig = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), sig);
        if (ec != std::errc{} || end != text.data() + text.size() || sig <= 0 || sig > SIGRTMAX)
            return std::nullopt;
        return sig;
    }
    if (text.size() > 3 && same_name(text.substr(0, 3), "SIG"))
        text.remove_prefix(3);
    for (const auto& [name, sig] : names)
        if (same_name(text, name))
            return sig;
    return std::nullopt;
}

std::string signal_name(int sig) {
    for (const auto& [name, number] : names)
        if (number == sig)
            return std::string("SIG") + name;
    return "signal " + std::to_string(sig);
}

} // namespace conclave::cli
