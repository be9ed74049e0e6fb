// SPDX-License-Identifier: BSL-1.0
// `conclave barrier set|remove|wait [options] <key>` (conclave::barrier) and `conclave
// barrier enter [options] <prefix> <command...>` (conclave::double_barrier, enter.cpp).
#include "cli/barrier/enter.hpp"
#include "cli/commands.hpp"
#include "cli/common/child_run.hpp"
#include "cli/common/recipe_command.hpp"

#include <conclave/barrier.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

constexpr const char* barrier_usage_head = R"(Usage: conclave barrier set|remove [options] <key>
       conclave barrier wait [-timeout=<duration>] [options] <key>
       conclave barrier enter -n=<n> [options] <prefix> [--] <command...>

  set, remove, wait: a barrier in <key> (conclave::barrier). While the key exists,
  every wait waits; remove lets them all through. Setting a set barrier and removing
  a removed one change nothing. The key has no session: it outlives this command.

  enter: a double barrier under <prefix> (conclave::double_barrier). Waits until -n
  participants (this one included) are inside, runs the command, then leaves and
  waits until every participant of the round has left. Each participant holds
  <prefix>/<session ID> with a session of its own; one that dies stops counting.
  The command's environment has CONCLAVE_BARRIER_PARTICIPANTS (-n) and
  CONCLAVE_SESSION_TTL. If the session is lost while the command runs, the command's
  process group gets SIGTERM, then SIGKILL after 5s, and conclave exits 3.
  SIGINT/SIGTERM are forwarded the same way; conclave then cleans up and exits
  128+signal. No session or key is left behind.

Exit status: 0 done (enter: the command's own status is ignored unless
-child-exit-code); 1 bad arguments, a key that is another recipe's, participants
expecting another -n, or a failure to reach Consul; 2 the command failed (with
-child-exit-code); 3 the session was lost while the command ran; 5 the barrier did not
open (wait: was not removed) within -timeout; 130/143 interrupted.

Options:

  -n=<int>                 enter: the number of participants, 1 to 4294967295; every
                           participant must give the same.
  -timeout=<duration>      wait, enter: the longest wait for the barrier to open ("10s",
                           "1m"), then exit 5. 0 (default) waits forever. (enter: the
                           wait for the others to leave is not bounded.)
  -name=<string>           enter: session name. Default "Barrier for '<command>' at
                           '<prefix>'".
  -ttl=<duration>          enter: session TTL, 10s to 24h (default 15s).
  -lock-delay=<duration>   enter: lock-delay of the session (default 0s).
  -child-exit-code         enter: exit 2 when the command exits non-zero or dies of a
                           signal.
)";

enum class operation { set, remove, wait };

struct plain_request {
    plain_request() = default; // not an aggregate: it is a coroutine's parameter (g++ 12)
    std::string key;
    operation op = operation::set;
    std::chrono::nanoseconds timeout{0};
};

asio::awaitable<int> run_plain(client& consul, asio::signal_set& signals, plain_request r) {
    diagnostics d;
    barrier b{consul, r.key, barrier_options{}.with_diag(&d)};
    if (r.op == operation::wait)
        co_return co_await wait_or_fail(error_of(b.async_wait(recipe_tuple_awaitable)), r.timeout,
                                        signals, "wait for barrier " + r.key + " to be removed", d,
                                        consul);
    auto [ec] = r.op == operation::set ? co_await b.async_set(recipe_tuple_awaitable)
                                       : co_await b.async_remove(recipe_tuple_awaitable);
    if (ec)
        co_return report_failure(ec, d, consul);
    co_return exit_code::ok;
}

} // namespace

int barrier_command(args a) {
    const std::string usage = barrier_usage_head + held_command_help("barrier session", false);
    std::string_view op;
    if (auto stop = choose_operation(a, {"set", "remove", "wait", "enter"},
                                     "set, remove, wait or enter", usage, op))
        return *stop;
    barrier_enter_settings cfg;
    plain_request plain;
    plain.op = op == "set" ? operation::set : op == "remove" ? operation::remove : operation::wait;
    const bool entering = op == "enter";
    flag_set flags;
    held_command_flags held;
    held.lock_delay = std::chrono::nanoseconds{0};
    std::int64_t participants = 0;
    std::chrono::nanoseconds timeout{0};
    flags.add_int("n", &participants);
    flags.add_duration("timeout", &timeout);
    flags.add_string("name", &cfg.session_name);
    flags.add_bool("child-exit-code", &cfg.child_exit_code);
    held.add_to(flags, cfg);
    std::vector<std::string_view> rest;
    if (auto stop = parse_or_usage(flags, a.subspan(1), usage.c_str(), rest))
        return *stop;
    if (auto stop = only_for(flags, hand_over_flag_names, "lock and elect", usage))
        return *stop;
    if (!entering) {
        if (auto stop = only_for(flags, child_flag_names, "enter", usage))
            return *stop;
        if (flags.was_set("n"))
            return usage_error("Error! -n is for enter", usage.c_str());
        if (plain.op != operation::wait && flags.was_set("timeout"))
            return usage_error("Error! -timeout is for wait and enter", usage.c_str());
        if (auto stop = one_argument(rest, "KEY", usage))
            return *stop;
        if (bad_timeout(timeout))
            return exit_code::error;
        plain.key = std::string(rest[0]);
        plain.timeout = timeout;
        return run_with_client(held.http, flags, "barrier",
                               [&](client& consul, asio::signal_set& signals) {
                                   return run_plain(consul, signals, plain);
                               });
    }
    if (auto stop = check_positive(participants, UINT32_MAX, "n", usage.c_str()))
        return *stop;
    cfg.command = command_after(rest, 1);
    if (rest.empty() || cfg.command.empty())
        return usage_error("Error! Key prefix and child command must be specified", usage.c_str());
    if (bad_timeout(timeout) || refused(check_session_ttl(held.ttl)) ||
        refused(check_lock_delay(held.lock_delay)) || refused(held.check_health_ttl()))
        return exit_code::error;
    if (auto stop = key_prefix(rest[0], cfg.prefix, usage))
        return *stop;
    cfg.participants = static_cast<std::uint32_t>(participants);
    cfg.timeout = timeout;
    held.store(cfg);
    if (cfg.session_name.empty())
        cfg.session_name = session_name_for("Barrier", cfg.command, cfg.prefix);
    return run_with_client(held.http, flags, "barrier",
                           [&](client& consul, asio::signal_set& signals) {
                               return run_barrier_enter(cfg, consul, signals);
                           });
}

} // namespace conclave::cli
