// SPDX-License-Identifier: BSL-1.0
#include "cli/common/failure.hpp"
#include "cli/common/own_session.hpp"
#include "cli/common/startup_check.hpp"
#include "cli/exit_codes.hpp"

#include <cstdio>

namespace conclave::cli {

namespace asio = boost::asio;

asio::awaitable<own_session_start> start_own_session(client& consul, asio::signal_set& signals,
                                                     const held_command_settings& cfg,
                                                     const std::string& stage,
                                                     const std::string& what) {
    own_session_start started;
    if (auto stop = co_await check_agent(consul, signals, stage)) {
        started.status = *stop;
        co_return started;
    }
    // Behavior delete: a process that dies leaves no key behind.
    const auto scfg = held_session_config(cfg, session_behavior::delete_keys);
    auto [create_failed, created] = co_await session::async_create(consul, scfg, with_text);
    if (const auto f = failure_of(create_failed)) {
        std::fprintf(stderr, "%s failed: failed to create session: %s\n", what.c_str(),
                     f.text.c_str());
        started.status = exit_code::error;
        co_return started;
    }
    started.keeper = std::make_unique<session_keeper>(std::move(created));
    co_return started;
}

asio::awaitable<bool> end_own_session(session_keeper& keeper) {
    if (auto ec = co_await keeper.stop(); ec) {
        std::fprintf(stderr,
                     "Session cleanup failed: %s (Consul drops it, and its keys, when its TTL "
                     "runs out)\n",
                     ec.message().c_str());
        co_return false;
    }
    co_return true;
}

} // namespace conclave::cli
