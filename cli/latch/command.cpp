// SPDX-License-Identifier: BSL-1.0
// `conclave latch create|count-down|get|wait [options] <key>`: a conclave::countdown_latch
// from the shell. create, count-down and get print the count afterwards, alone on a line.
#include "cli/commands.hpp"
#include "cli/common/recipe_command.hpp"

#include <conclave/latch.hpp>

#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

const char* const latch_usage =
    R"(Usage: conclave latch create -count=<n> [options] <key>
       conclave latch count-down [options] <key>
       conclave latch get [options] <key>
       conclave latch wait [-timeout=<duration>] [options] <key>

  A countdown latch in <key> (conclave::countdown_latch): a count set once, counted
  down by any process, waited for until it reaches 0. A missing key is a count of 0;
  the count down to 0 deletes the key.

  create       sets the count to -count if the latch is open (0) and prints it; a
               latch still counting is refused (exit 1, its count on stderr)
  count-down   counts down by one and prints the count left (0: it opened the latch;
               a latch at 0 stays at 0)
  get          prints the count
  wait         waits until the count is 0 (at once when it is), prints nothing

  Exit status: 0 done; 1 bad arguments, a key that is not a latch's (another recipe's,
  a value that is not a count), a create while a count is set, or a failure to reach
  Consul; 5 wait: the count did not reach 0 within -timeout; 130/143 wait: interrupted.
  A write whose answer never came may have been applied (the message says so).

Options:

  -count=<n>               create: the count, at least 1.
  -timeout=<duration>      wait: the longest wait ("10s", "1m"), then exit 5. 0
                           (default) waits until the count is 0.
  -help                    Show this help.

)";

enum class operation { create, count_down, get, wait };

struct latch_request {
    latch_request() = default; // not an aggregate: it is a coroutine's parameter (g++ 12)
    std::string key;
    operation op = operation::get;
    std::uint64_t count = 0;
    std::chrono::nanoseconds timeout{0};
};

asio::awaitable<int> run_latch(client& consul, asio::signal_set& signals, latch_request r) {
    diagnostics d;
    countdown_latch l{consul, r.key, latch_options{}.with_diag(&d)};
    std::uint64_t count = 0;
    error_code ec;
    switch (r.op) {
    case operation::create: {
        auto [e, fresh] = co_await l.async_try_set_count(r.count, recipe_tuple_awaitable);
        if (!e && !fresh) {
            auto [get_error, now] = co_await l.async_get_count(recipe_tuple_awaitable);
            std::fprintf(stderr, "Error! latch %s is counting down already (count %s)\n",
                         r.key.c_str(), get_error ? "unknown" : std::to_string(now).c_str());
            co_return exit_code::error;
        }
        ec = e;
        count = r.count;
        break;
    }
    case operation::count_down: {
        auto [e, left] = co_await l.async_count_down(recipe_tuple_awaitable);
        ec = e;
        count = left;
        break;
    }
    case operation::get: {
        auto [e, now] = co_await l.async_get_count(recipe_tuple_awaitable);
        ec = e;
        count = now;
        break;
    }
    case operation::wait:
        co_return co_await wait_or_fail(error_of(l.async_wait(recipe_tuple_awaitable)), r.timeout,
                                        signals, "wait for latch " + r.key, d, consul);
    }
    if (ec)
        co_return report_failure(ec, d, consul);
    std::printf("%llu\n", static_cast<unsigned long long>(count));
    co_return exit_code::ok;
}

} // namespace

int latch_command(args a) {
    const std::string usage = latch_usage;
    std::string_view op;
    if (auto stop = choose_operation(a, {"create", "count-down", "get", "wait"},
                                     "create, count-down, get or wait", usage, op))
        return *stop;
    latch_request r;
    r.op = op == "create"       ? operation::create
           : op == "count-down" ? operation::count_down
           : op == "get"        ? operation::get
                                : operation::wait;
    flag_set flags;
    http_flags http;
    std::int64_t count = 0;
    flags.add_int("count", &count);
    flags.add_duration("timeout", &r.timeout);
    http.add_to(flags);
    std::vector<std::string_view> rest;
    if (auto stop = parse_or_usage(flags, a.subspan(1), latch_usage, rest))
        return *stop;
    if (auto stop = one_argument(rest, "KEY", latch_usage))
        return *stop;
    if (r.op == operation::create) {
        if (auto stop = check_positive(count, std::numeric_limits<std::int64_t>::max(), "count",
                                       latch_usage))
            return *stop;
        r.count = static_cast<std::uint64_t>(count);
    } else if (flags.was_set("count")) {
        return usage_error("Error! -count is for create", latch_usage);
    }
    if (r.op != operation::wait && flags.was_set("timeout"))
        return usage_error("Error! -timeout is for wait", latch_usage);
    if (bad_timeout(r.timeout))
        return exit_code::error;
    r.key = std::string(rest[0]);
    return run_with_client(http, flags, "latch", [&](client& consul, asio::signal_set& signals) {
        return run_latch(consul, signals, r);
    });
}

} // namespace conclave::cli
