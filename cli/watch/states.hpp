// SPDX-License-Identifier: BSL-1.0
// The loop both forms of `conclave watch` run: each state of the watched key or prefix
// to a handler, until -count states, a signal or an error that retrying cannot fix.
#pragma once

#include <conclave/client.hpp>
#include <conclave/watch.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <cstdint>
#include <functional>
#include <optional>

namespace conclave::cli {

/// What becomes of one state (`n`: how many came before it): nothing to go on, or the
/// exit status to end the watch with.
using state_handler = std::function<boost::asio::awaitable<std::optional<int>>(
    const watch_snapshot& state, std::uint64_t n)>;

/// Checks once that Consul answers (the watch retries transient errors quietly, so a
/// wrong address would just hang), then hands each state of `target` to `on_state`.
/// Returns the exit status: 0 after `count` states (0: no limit) or on SIGINT/SIGTERM,
/// on_state's, or 1 after an error the watch cannot retry ("Error watching '<path>': ...").
boost::asio::awaitable<int> watch_states(client& consul, watch_target target, std::uint64_t count,
                                         boost::asio::signal_set& signals, state_handler on_state);

} // namespace conclave::cli
