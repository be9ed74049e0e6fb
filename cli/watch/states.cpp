// SPDX-License-Identifier: BSL-1.0
#include "cli/common/startup_check.hpp"
#include "cli/exit_codes.hpp"
#include "cli/watch/states.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <string>
#include <tuple>

namespace conclave::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

asio::awaitable<std::tuple<error_code, watch_snapshot>> next_change(watch& w) {
    co_return co_await w.async_next(asio::as_tuple(asio::use_awaitable));
}

} // namespace

asio::awaitable<int> watch_states(client& consul, watch_target target, std::uint64_t count,
                                  asio::signal_set& signals, state_handler on_state) {
    if (auto stop = co_await check_agent(consul, signals, "watching"))
        co_return *stop;
    const std::string watched = target.path();
    diagnostics diag;
    watch w{consul, std::move(target), watch_options{}.with_diag(&diag)};
    for (std::uint64_t n = 0; count == 0 || n < count; ++n) {
        auto r = co_await (next_change(w) || next_signal(signals));
        if (r.index() == 1)
            co_return exit_code::ok;
        auto& [ec, snap] = std::get<0>(r);
        if (ec) {
            std::fprintf(stderr, "Error watching '%s': %s\n", watched.c_str(),
                         conclave::error(ec, diag).what());
            co_return exit_code::error;
        }
        if (auto stop = co_await on_state(snap, n))
            co_return *stop;
    }
    co_return exit_code::ok;
}

} // namespace conclave::cli
