// SPDX-License-Identifier: BSL-1.0
// `conclave counter <key> get|add <n>|set <n>|next`: a conclave::counter from the shell.
// Each prints the counter's value afterwards, alone on a line, for scripts
// (`id=$(conclave counter seq/invoice next)`).
#include "cli/commands.hpp"
#include "cli/common/flags.hpp"
#include "cli/common/http_flags.hpp"
#include "cli/common/recipe_command.hpp"
#include "cli/exit_codes.hpp"
#include "cli/kv/common.hpp"
#include "cli/run.hpp"
#include "recipes/counter/counter_value.hpp"

#include <conclave/counter.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

const char* const counter_usage =
    R"(Usage: conclave counter [options] <key> get|next|add <n>|set <n>

  A 64-bit signed counter stored in <key> as decimal text (conclave::counter; a
  missing key is 0). Prints the counter's value after the operation, alone on a
  line. Exit status: 0 done; 1 bad arguments, a key that is not a counter (not a
  number, or another recipe's key), an add that would overflow, or a failure to
  reach Consul.

Operations:

  get        prints the value
  next       adds 1 and prints the value this add wrote (a sequence number)
  add <n>    adds <n> (negative to subtract) and prints the value this add wrote
  set <n>    sets the value to <n> and prints it

Every write is a check-and-set, retried when another writer came in between; one
whose answer never came may have been applied (the message says so).

Options: -help, and the HTTP API options below.

)";

enum class operation { get, next, add, set };

struct counter_request {
    counter_request() = default; // not an aggregate: it is a coroutine's parameter (g++ 12)
    std::string key;
    operation op = operation::get;
    std::int64_t n = 0;
};

int counter_usage_error(const std::string& message) {
    return usage_error(message, counter_usage);
}

asio::awaitable<int> run_counter(client& consul, counter_request r) {
    constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
    diagnostics d;
    counter c{consul, r.key, counter_options{}.with_diag(&d)};
    error_code ec;
    std::int64_t value = 0;
    switch (r.op) {
    case operation::get: {
        auto [e, reading] = co_await c.async_get(tuple_awaitable);
        ec = e;
        value = reading.value;
        break;
    }
    case operation::next:
    case operation::add: {
        auto [e, v] = co_await c.async_add(r.op == operation::next ? 1 : r.n, tuple_awaitable);
        ec = e;
        value = v;
        break;
    }
    case operation::set: {
        auto [e] = co_await c.async_set(r.n, tuple_awaitable);
        ec = e;
        value = r.n;
        break;
    }
    }
    if (ec)
        co_return report_failure(ec, d, consul);
    std::printf("%lld\n", static_cast<long long>(value));
    co_return exit_code::ok;
}

} // namespace

int counter_command(args a) {
    flag_set flags;
    http_flags http;
    http.add_to(flags);
    std::vector<std::string_view> rest;
    if (auto stop = parse_or_usage(flags, a, counter_usage, rest))
        return *stop;
    if (rest.empty())
        return counter_usage_error("Error! Missing KEY argument");
    if (rest.size() == 1)
        return counter_usage_error("Error! Missing operation: get, next, add <n> or set <n>");
    counter_request r;
    r.key = std::string(rest[0]);
    const std::string_view op = rest[1];
    const bool takes_number = op == "add" || op == "set";
    if (op == "get")
        r.op = operation::get;
    else if (op == "next")
        r.op = operation::next;
    else if (op == "add")
        r.op = operation::add;
    else if (op == "set")
        r.op = operation::set;
    else
        return counter_usage_error("Error! Unknown operation '" + std::string(op) +
                                   "': use get, next, add <n> or set <n>");
    const std::size_t expected = takes_number ? 3 : 2;
    if (rest.size() < expected)
        return counter_usage_error("Error! Missing the number for " + std::string(op));
    if (rest.size() > expected)
        return counter_usage_error("Too many arguments (expected " + std::to_string(expected) +
                                   ", got " + std::to_string(rest.size()) + ")");
    if (takes_number) {
        const auto n = rest[2].empty() ? std::nullopt : detail::parse_counter(rest[2]);
        if (!n)
            return counter_usage_error("Error! Not a 64-bit decimal integer: '" +
                                       std::string(rest[2]) + "'");
        r.n = *n;
    }
    asio::io_context ioc;
    std::optional<client> consul;
    if (!http.open_client(flags, ioc, consul))
        return exit_code::error;
    return run_command(ioc, run_counter(*consul, r), "counter");
}

} // namespace conclave::cli
