// SPDX-License-Identifier: BSL-1.0
#include "cli/common/jeopardy_relay.hpp"
#include "cli/common/signal_name.hpp"
#include "codec/go/duration.hpp"

#include <csignal>
#include <cstdio>

namespace conclave::cli {

namespace {

std::string sent(int sig) {
    return sig == 0 ? std::string() : " (sent " + signal_name(sig) + " to the child)";
}

// "4.3s": to a tenth of a second, which is all a reader of the log needs.
std::string tenths(std::chrono::steady_clock::duration d) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d);
    return codec::go::format_duration(ms - ms % 100);
}

} // namespace

boost::asio::awaitable<void> relay_health(health_source source, pid_t child,
                                          jeopardy_signals signals, std::string what) {
    hold_health seen = hold_health::held;
    for (;;) {
        // From lost, the wait completes only when cancelled: the relay then ends too.
        const auto [ec, health] = co_await source.wait_change(seen);
        if (ec)
            co_return;
        if (health == hold_health::jeopardy) {
            // Sent first: the child learns of it as early as possible.
            if (signals.jeopardy != 0)
                ::kill(child, signals.jeopardy);
            std::fprintf(stderr,
                         "%s in jeopardy: renewals of its session are failing or late; held "
                         "for at most %s more unless one succeeds%s\n",
                         what.c_str(), tenths(source.remaining()).c_str(),
                         sent(signals.jeopardy).c_str());
        } else if (health == hold_health::held && seen == hold_health::jeopardy) {
            if (signals.recovery != 0)
                ::kill(child, signals.recovery);
            std::fprintf(stderr, "%s no longer in jeopardy: its session was renewed%s\n",
                         what.c_str(), sent(signals.recovery).c_str());
        }
        seen = health;
    }
}

} // namespace conclave::cli
