// SPDX-License-Identifier: BSL-1.0
#include "cli/common/child_control.hpp"
#include "cli/common/child_run.hpp"
#include "cli/common/startup_check.hpp"
#include "cli/exit_codes.hpp"
#include "process/exit_wait.hpp"
#include "process/wait_status.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <cstdio>
#include <memory>
#include <sys/wait.h>
#include <system_error>

namespace conclave::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// An arm of `||` that never completes when nothing can be lost.
asio::awaitable<error_code> lost(const held_by_child& held) {
    if (held.wait_lost)
        co_return co_await held.wait_lost();
    asio::steady_timer never(co_await asio::this_coro::executor,
                             asio::steady_timer::time_point::max());
    auto [ec] = co_await never.async_wait(tuple_awaitable);
    co_return ec;
}

} // namespace

std::string describe_loss(const error_code& ec) {
    if (ec == errc::lock_lost)
        return "its key was taken, released or deleted, or could not be read";
    if (ec == errc::session_invalidated)
        return "its session was invalidated";
    if (ec == errc::session_expired)
        return "its session could not be renewed in time";
    return ec.message();
}

void say(const std::string& text) {
    std::fprintf(stderr, "%s\n", text.c_str());
}

held_by_child held_grant(const grant& g, std::string what) {
    held_by_child h;
    h.wait_lost = [g]() -> asio::awaitable<error_code> {
        auto [ec] = co_await g.async_wait_lost(tuple_awaitable);
        co_return ec;
    };
    h.held = [g] { return g.held().has_value(); };
    h.health = {[g](hold_health seen) -> asio::awaitable<std::tuple<error_code, hold_health>> {
                    co_return co_await g.async_wait_health_change(seen, tuple_awaitable);
                },
                [g] { return g.remaining(); }};
    h.what = std::move(what);
    return h;
}

held_by_child held_session(session& s, std::string what) {
    held_by_child h;
    h.wait_lost = [&s]() -> asio::awaitable<error_code> {
        auto [ec] = co_await s.async_wait_lost(tuple_awaitable);
        co_return ec;
    };
    h.held = [&s] { return s.health() != hold_health::lost; };
    h.health = {[&s](hold_health seen) -> asio::awaitable<std::tuple<error_code, hold_health>> {
                    co_return co_await s.async_wait_health_change(seen, tuple_awaitable);
                },
                [&s] { return s.remaining(); }};
    h.what = std::move(what);
    return h;
}

asio::awaitable<int> run_child(const held_command_settings& cfg, bool child_exit_code,
                               std::vector<std::string> env, const held_by_child& held,
                               asio::signal_set& signals) {
    const auto options = child_options(cfg.command, cfg.shell, cfg.pass_stdin, std::move(env));
    std::unique_ptr<programs::child_process> child;
    try {
        child = std::make_unique<programs::child_process>(options);
    } catch (const std::system_error& e) {
        say("Error starting child '" + options.argv.front() + "': " + e.code().message() +
            " (check the command and PATH)");
        co_return exit_code::error;
    }
    // The relay never completes by itself: it only reports jeopardy while the others wait.
    auto r = co_await (programs::async_wait_exit(*child) || lost(held) || next_signal(signals) ||
                       relay_health(held.health, child->pid(), cfg.signals, held.what));
    int code = exit_code::ok;
    int status = 0;
    if (r.index() == 0) {
        // What the command started must not run on after it: its group goes too (the
        // exited command is not reaped yet, so its process group id still names it).
        child->signal(SIGKILL);
        status = child->reap();
        if (held.held && !held.held()) {
            say(held.what + " lost while the child ran");
            code = exit_code::lock_lost;
        } else if (cfg.verbose) {
            say("Child terminated (" + programs::describe_wait_status(status) + ")");
        }
    } else if (r.index() == 1) {
        say(held.what + " lost (" + describe_loss(std::get<1>(r)) + "), killing child");
        status = co_await stop_child(*child, SIGTERM, &signals);
        code = exit_code::lock_lost;
    } else {
        const int sig = std::get<2>(r);
        if (cfg.verbose)
            say("Shutdown triggered, killing child");
        status = co_await stop_child(*child, sig, &signals);
        code = exit_code::interrupted_base + sig;
    }
    const bool child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (code == exit_code::ok && !child_ok && child_exit_code)
        code = exit_code::child_failed;
    co_return code;
}

std::vector<std::string> command_after(const std::vector<std::string_view>& rest,
                                       std::size_t leading) {
    if (rest.size() <= leading)
        return {};
    auto first = rest.begin() + static_cast<std::ptrdiff_t>(leading);
    if (first != rest.end() && *first == "--")
        ++first;
    return {first, rest.end()};
}

} // namespace conclave::cli
