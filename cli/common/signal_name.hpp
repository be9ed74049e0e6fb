// SPDX-License-Identifier: BSL-1.0
// Signal names on the command line (-jeopardy-signal USR1), as kill(1) takes them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace conclave::cli {

/// "USR1", "SIGUSR1", "usr1" or a number ("10"); nothing for an unknown name or a number
/// that is no signal (0, above SIGRTMAX).
std::optional<int> parse_signal(std::string_view text);

/// "SIGUSR1" for a named signal, "signal 40" otherwise (real-time signals).
std::string signal_name(int sig);

} // namespace conclave::cli
