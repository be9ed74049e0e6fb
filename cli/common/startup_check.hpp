// SPDX-License-Identifier: BSL-1.0
// What `conclave lock` and `conclave elect` do before taking anything: a race between
// "Consul answers" and a SIGINT/SIGTERM, and the signal wait they race against later too.
#pragma once

#include <conclave/client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <optional>
#include <string_view>

namespace conclave::cli {

/// The next SIGINT/SIGTERM (0 when the wait was cancelled). Never throws, so it can be an
/// arm of `||`.
boost::asio::awaitable<int> next_signal(boost::asio::signal_set& signals);

/// Checks that the agent answers (a read: cancelling it leaves nothing behind), unless a
/// signal comes first. Empty: go on. Otherwise the exit status, the reason printed on
/// stderr ("Shutdown triggered before <stage>", or where Consul was looked for).
boost::asio::awaitable<std::optional<int>>
check_agent(client& consul, boost::asio::signal_set& signals, std::string_view stage);

} // namespace conclave::cli
