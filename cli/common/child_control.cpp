// SPDX-License-Identifier: BSL-1.0
#include "cli/common/child_control.hpp"
#include "process/exit_wait.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <utility>

namespace conclave::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// Each arm of the race below returns a value (never throws), so `||` completes with the
// first to finish and cancels the others.
asio::awaitable<int> next_signal(asio::signal_set& signals) {
    auto [ec, sig] = co_await signals.async_wait(tuple_awaitable);
    co_return ec ? 0 : sig;
}

// Never completes by itself when there is no signal set to wait on.
asio::awaitable<int> next_signal_or_never(asio::signal_set* signals) {
    if (signals != nullptr)
        co_return co_await next_signal(*signals);
    asio::steady_timer never(co_await asio::this_coro::executor,
                             asio::steady_timer::time_point::max());
    co_await never.async_wait(tuple_awaitable);
    co_return 0;
}

asio::awaitable<bool> expires(asio::steady_timer& t) {
    auto [ec] = co_await t.async_wait(tuple_awaitable);
    co_return !ec;
}

} // namespace

std::vector<std::string> child_argv(const std::vector<std::string>& command, bool shell) {
    if (!shell)
        return command;
    std::string script;
    for (const auto& part : command)
        script += (script.empty() ? "" : " ") + part;
    const char* sh = std::getenv("SHELL");
    return {sh != nullptr && *sh != '\0' ? sh : "/bin/sh", "-c", script};
}

programs::spawn_options child_options(const std::vector<std::string>& command, bool shell,
                                      bool pass_stdin, std::vector<std::string> extra_env) {
    programs::spawn_options o;
    o.argv = child_argv(command, shell);
    o.extra_env = std::move(extra_env);
    o.stdin_null = !pass_stdin;
    o.own_process_group = !in_terminal_foreground();
    // Nothing may run on when conclave is killed (SIGKILL, OOM killer): the lock or the
    // leadership is then gone when the session ends, while the command would still act.
    o.die_with_parent = true;
    return o;
}

bool in_terminal_foreground() {
    for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO})
        if (::isatty(fd) && ::tcgetpgrp(fd) == ::getpgrp())
            return true;
    return false;
}

asio::awaitable<int> stop_child(programs::child_process& child, int first,
                                asio::signal_set* signals) {
    auto ex = co_await asio::this_coro::executor;
    if (first != 0)
        child.signal(first);
    asio::steady_timer grace(ex, kill_grace);
    for (;;) {
        auto r = co_await (programs::async_wait_exit(child) || expires(grace) ||
                           next_signal_or_never(signals));
        if (r.index() == 0)
            break; // exited (or the wait was cancelled: SIGKILL below)
        if (r.index() == 1) {
            std::fprintf(stderr, "Child did not exit within %llds, sending SIGKILL\n",
                         static_cast<long long>(kill_grace.count()));
            child.signal(SIGKILL);
            co_await programs::async_wait_exit(child);
            break;
        }
        if (const int sig = std::get<2>(r); sig != 0)
            child.signal(sig);
    }
    child.signal(SIGKILL);
    co_return child.reap();
}

} // namespace conclave::cli
