// SPDX-License-Identifier: BSL-1.0
#include "cli/barrier/enter.hpp"
#include "cli/common/child_run.hpp"
#include "cli/common/own_session.hpp"
#include "cli/common/recipe_command.hpp"
#include "cli/common/session_ttl.hpp"

#include <conclave/barrier.hpp>

#include <cstdio>

namespace conclave::cli {

namespace asio = boost::asio;

asio::awaitable<int> run_barrier_enter(const barrier_enter_settings& cfg, client& consul,
                                       asio::signal_set& signals) {
    auto started =
        co_await start_own_session(consul, signals, cfg, "barrier enter", "Barrier enter");
    if (!started.keeper)
        co_return started.status;
    auto& keeper = started.keeper;
    diagnostics d;
    double_barrier b{consul, cfg.prefix, cfg.participants, barrier_options{}.with_diag(&d)};

    if (cfg.verbose)
        say("Entering double barrier " + cfg.prefix);
    // A cancelled or failed enter deletes its key.
    const int entered = co_await wait_or_fail(
        error_of(b.async_enter(keeper->get(), recipe_tuple_awaitable)), cfg.timeout, signals,
        "entering double barrier " + cfg.prefix, d, consul);
    if (entered != exit_code::ok) {
        const bool cleaned = co_await end_own_session(*keeper);
        co_return cleaned ? entered : exit_code::error;
    }

    if (cfg.verbose)
        say("Double barrier open, starting child");
    // (Named, not braced inside the co_await: g++ 12 destroys such temporaries twice.)
    std::vector<std::string> env{"CONCLAVE_BARRIER_PARTICIPANTS=" +
                                     std::to_string(cfg.participants),
                                 "CONCLAVE_SESSION_TTL=" + ttl_seconds(keeper->get().ttl())};
    const auto held = held_session(keeper->get(), "Barrier session");
    int code = co_await run_child(cfg, cfg.child_exit_code, std::move(env), held, signals);

    // Leave and wait for the round, also after a loss or a signal: the last to see its round
    // gone deletes the marker (the only participant included). Another signal ends the wait.
    if (cfg.verbose)
        say("Leaving double barrier " + cfg.prefix);
    const int left = co_await wait_or_fail(
        error_of(b.async_leave(keeper->get(), recipe_tuple_awaitable)), std::chrono::nanoseconds{0},
        signals, "leaving double barrier " + cfg.prefix, d, consul);
    if (left != exit_code::ok && (code == exit_code::ok || code == exit_code::child_failed))
        code = left;
    const bool cleaned = co_await end_own_session(*keeper);
    if (code == exit_code::lock_lost || code >= exit_code::interrupted_base)
        co_return code;
    co_return cleaned ? code : exit_code::error;
}

} // namespace conclave::cli
