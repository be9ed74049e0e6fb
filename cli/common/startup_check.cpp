// SPDX-License-Identifier: BSL-1.0
#include "cli/common/startup_check.hpp"
#include "cli/exit_codes.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <string>

namespace conclave::cli {

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// /v1/status/leader: no ACL rule guards it, so a token made for the command's keys and
// sessions is enough (consul lock asks /v1/agent/self, which needs agent read).
asio::awaitable<error_code> agent_reachable(client& consul, diagnostics& diag) {
    auto [ec, leader] =
        co_await consul.async_status_leader(write_options{}.with_diag(&diag), tuple_awaitable);
    co_return ec;
}

} // namespace

asio::awaitable<int> next_signal(asio::signal_set& signals) {
    auto [ec, sig] = co_await signals.async_wait(tuple_awaitable);
    co_return ec ? 0 : sig;
}

asio::awaitable<std::optional<int>> check_agent(client& consul, asio::signal_set& signals,
                                                std::string_view stage) {
    using namespace asio::experimental::awaitable_operators;
    diagnostics diag;
    auto r = co_await (agent_reachable(consul, diag) || next_signal(signals));
    if (r.index() == 1) {
        std::fprintf(stderr, "Shutdown triggered before %.*s\n", static_cast<int>(stage.size()),
                     stage.data());
        co_return exit_code::interrupted_base + std::get<1>(r);
    }
    if (const auto ec = std::get<0>(r); ec) {
        std::string text = "Error querying Consul agent at " + consul.config().describe_address() +
                           ": " + error(ec, diag).what();
        if (diag.http_status == 0) // (no answer at all)
            text += ". Is the agent running? Point -http-addr or CONSUL_HTTP_ADDR at it.";
        std::fprintf(stderr, "%s\n", text.c_str());
        co_return exit_code::error;
    }
    co_return std::nullopt;
}

} // namespace conclave::cli
