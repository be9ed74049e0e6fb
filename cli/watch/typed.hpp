// SPDX-License-Identifier: BSL-1.0
// `conclave watch -type=key|keyprefix`: `consul watch`'s interface. Each state goes, as
// Consul's JSON, to a handler command's stdin (run once per change), or, without a
// handler, the current state is printed once.
#pragma once

#include <conclave/client.hpp>
#include <conclave/watch.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace conclave::cli {

struct typed_watch_settings {
    watch_target target = watch::key(std::string()); ///< key: one pair or null; prefix: an array
    std::vector<std::string> handler;                ///< the command; empty: print once and exit
    bool shell = true;       ///< -shell: `$SHELL -c` with the arguments joined
    std::uint64_t count = 0; ///< handler runs before exiting 0; 0: no limit
};

/// Returns the exit status: 0 printed, -count runs, or interrupted (SIGINT/SIGTERM, also
/// forwarded to a running handler, which is waited for); 1 a handler failed ("Error
/// executing handler: exit status 3", as consul watch) or could not start, or the watch
/// hit an error that retrying cannot fix.
boost::asio::awaitable<int> run_typed_watch(client& consul, typed_watch_settings cfg,
                                            boost::asio::signal_set& signals);

} // namespace conclave::cli
