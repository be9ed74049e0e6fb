// SPDX-License-Identifier: BSL-1.0
#include "cli/common/key_path.hpp"
#include "cli/common/recipe_command.hpp"
#include "cli/common/startup_check.hpp"
#include "cli/kv/common.hpp"
#include "codec/go/duration.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <cstdio>

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

// Never completes (but when cancelled) for no timeout.
asio::awaitable<bool> expires(std::chrono::nanoseconds timeout) {
    asio::steady_timer t(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
    if (timeout.count() > 0)
        t.expires_after(timeout);
    auto [ec] = co_await t.async_wait(recipe_tuple_awaitable);
    co_return !ec;
}

} // namespace

std::string recipe_failure(const error_code& ec, const diagnostics& d, const client& consul) {
    std::string text = consul_error(ec, d, consul);
    if (ec != errc::permission_denied && !d.client_message.empty())
        text += " [" + d.client_message + "]";
    return text;
}

int report_failure(const error_code& ec, const diagnostics& d, const client& consul) {
    std::fprintf(stderr, "Error! %s\n", recipe_failure(ec, d, consul).c_str());
    return exit_code::error;
}

asio::awaitable<bounded_outcome> bounded_wait(asio::awaitable<error_code> op,
                                              std::chrono::nanoseconds timeout,
                                              asio::signal_set& signals) {
    using namespace asio::experimental::awaitable_operators;
    auto r = co_await (std::move(op) || expires(timeout) || next_signal(signals));
    bounded_outcome o;
    if (r.index() == 0) {
        o.ec = std::get<0>(r);
    } else if (r.index() == 1) {
        o.ended = bounded_outcome::how::timed_out;
    } else {
        o.ended = bounded_outcome::how::signalled;
        o.signal = std::get<2>(r);
    }
    co_return o;
}

asio::awaitable<error_code> error_of(asio::awaitable<std::tuple<error_code>> op) {
    auto [ec] = co_await std::move(op);
    co_return ec;
}

asio::awaitable<int> wait_or_fail(asio::awaitable<error_code> op, std::chrono::nanoseconds timeout,
                                  asio::signal_set& signals, std::string what, const diagnostics& d,
                                  const client& consul) {
    const auto o = co_await bounded_wait(std::move(op), timeout, signals);
    if (o.ended == bounded_outcome::how::done && !o.ec)
        co_return exit_code::ok;
    co_return bounded_failure(o, what, timeout, d, consul);
}

int bounded_failure(const bounded_outcome& o, const std::string& what,
                    std::chrono::nanoseconds timeout, const diagnostics& d, const client& consul) {
    switch (o.ended) {
    case bounded_outcome::how::timed_out:
        std::fprintf(stderr, "Timeout: %s within %s\n", what.c_str(),
                     codec::go::format_duration(timeout).c_str());
        return exit_code::timed_out;
    case bounded_outcome::how::signalled:
        std::fprintf(stderr, "Shutdown triggered during %s\n", what.c_str());
        return exit_code::interrupted_base + o.signal;
    case bounded_outcome::how::done:
        break;
    }
    return report_failure(o.ec, d, consul);
}

std::optional<int> check_positive(std::int64_t value, std::int64_t most, const char* flag,
                                  const char* usage) {
    if (value > 0 && value <= most)
        return std::nullopt;
    return usage_error(std::string("Error! -") + flag + " must be between 1 and " +
                           std::to_string(most) + " (got " + std::to_string(value) + ")",
                       usage);
}

std::optional<int> choose_operation(args a, std::initializer_list<std::string_view> ops,
                                    const char* choices, const std::string& usage,
                                    std::string_view& op) {
    if (a.empty())
        return usage_error(std::string("Error! Missing operation: ") + choices, usage.c_str());
    op = a[0];
    if (op == "-help" || op == "-h" || op == "--help") {
        std::fputs(usage.c_str(), stdout);
        std::fputs(http_flags_usage, stdout);
        return exit_code::ok;
    }
    for (const auto known : ops)
        if (op == known)
            return std::nullopt;
    return usage_error("Error! Unknown operation '" + std::string(op) + "': use " + choices,
                       usage.c_str());
}

std::optional<int> one_argument(const std::vector<std::string_view>& rest, const char* what,
                                const std::string& usage) {
    if (rest.empty())
        return usage_error(std::string("Error! Missing ") + what + " argument", usage.c_str());
    if (rest.size() > 1)
        return usage_error("Too many arguments (expected 1, got " + std::to_string(rest.size()) +
                               ")",
                           usage.c_str());
    return std::nullopt;
}

std::optional<int> key_prefix(std::string_view given, std::string& prefix,
                              const std::string& usage) {
    prefix = clean_key_path(given);
    if (!prefix.empty())
        return std::nullopt;
    return usage_error("Error! Key prefix '" + std::string(given) + "' names no key",
                       usage.c_str());
}

bool bad_timeout(std::chrono::nanoseconds timeout) {
    if (timeout.count() >= 0)
        return false;
    std::fputs("Timeout must be positive\n", stderr);
    return true;
}

} // namespace conclave::cli
