// SPDX-License-Identifier: BSL-1.0
#include "cli/common/child_run.hpp"
#include "cli/common/own_session.hpp"
#include "cli/common/recipe_command.hpp"
#include "cli/common/session_ttl.hpp"
#include "cli/group/join.hpp"

#include <conclave/group.hpp>

#include <cstdio>

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

asio::awaitable<error_code> join(group& g, session& s, const group_join_settings& cfg,
                                 membership& out) {
    auto [ec, m] = co_await g.async_join(s, cfg.id, cfg.value, recipe_tuple_awaitable);
    out = std::move(m);
    co_return ec;
}

} // namespace

asio::awaitable<int> run_group_join(const group_join_settings& cfg, client& consul,
                                    asio::signal_set& signals) {
    auto started = co_await start_own_session(consul, signals, cfg, "group join", "Group join");
    if (!started.keeper)
        co_return started.status;
    auto& keeper = started.keeper;
    diagnostics d;
    group g{consul, cfg.prefix, group_options{}.with_diag(&d)};
    membership member;
    // A cancelled join leaves nothing joined (a write that may have been applied is undone).
    const auto got = co_await bounded_wait(join(g, keeper->get(), cfg, member),
                                           std::chrono::nanoseconds{0}, signals);
    int code = exit_code::ok;
    if (got.ended != bounded_outcome::how::done || got.ec) {
        code = bounded_failure(got, "group join", {}, d, consul);
    } else {
        if (cfg.verbose)
            say("Joined " + cfg.prefix + " as " + cfg.id + ", starting child");
        // (Named, not braced inside the co_await: g++ 12 destroys such temporaries twice.)
        std::vector<std::string> env{"CONCLAVE_MEMBER_KEY=" + member.token().key,
                                     "CONCLAVE_SESSION_TTL=" + ttl_seconds(keeper->get().ttl())};
        const auto held = held_grant(member, "Membership");
        code = co_await run_child(cfg, cfg.child_exit_code, std::move(env), held, signals);
        // Leaves also after a loss (succeeds then): the key must not outlive the command.
        auto [left] = co_await member.async_leave(recipe_tuple_awaitable);
        if (left) {
            say("Group leave failed: " + left.message());
            if (code == exit_code::ok)
                code = exit_code::error;
        } else if (cfg.verbose) {
            say("Left " + cfg.prefix);
        }
    }
    const bool cleaned = co_await end_own_session(*keeper);
    if (!cleaned && (code == exit_code::ok || code == exit_code::child_failed))
        code = exit_code::error;
    co_return code;
}

} // namespace conclave::cli
