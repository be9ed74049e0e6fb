// SPDX-License-Identifier: BSL-1.0
// `conclave watch [options] <key | prefix/>`: prints each change, one line per key, until
// interrupted (or -count reports), over conclave::watch.
#include "commands.hpp"
#include "exit_codes.hpp"
#include "flags.hpp"
#include "http_flags.hpp"
#include "run.hpp"
#include "startup_check.hpp"

#include <conclave/watch.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <cstdio>
#include <map>
#include <optional>

namespace conclave::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

constexpr const char* watch_usage = R"(Usage: conclave watch [options] <key | prefix/>

  Prints the current state of a key (or of every key under a prefix: an argument ending
  in '/', or -prefix), then each change, until SIGINT/SIGTERM or -count reports. Every
  report starts with "index <X-Consul-Index>", followed by one line per key that changed:

    + <key>=<value>    created
    ~ <key>=<value>    changed (value, flags or lock holder)
    - <key>            deleted (or absent in the first report)

  A held key shows " [session <id>]" after its value. Values are printed on one line:
  '\', newlines and other control bytes are escaped (\\, \n, \xHH). Changes that happen
  between two reports are coalesced: each report has the latest state.

  Exit status: 0 interrupted or -count reached, 1 bad arguments or an error that
  retrying cannot fix (ACL denied, invalid key). Transient errors are retried quietly.

Options:

  -prefix                  Watch every key under the argument, even without a final '/'.
  -count=<n>               Exit after n reports (the first state counts). 0: never.
  -help                    Show this help.

)";

std::string escape(const std::string& v) {
    std::string out;
    for (const unsigned char c : v) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += char(c);
        }
    }
    return out;
}

void print_entry(char mark, const kv_entry& e) {
    std::string line = std::string(1, mark) + " " + e.key + "=" + escape(e.value);
    if (!e.session.empty())
        line += " [session " + e.session + "]";
    std::printf("%s\n", line.c_str());
}

// Prints what differs from the last report; `last` becomes the new state.
void report(const watch_snapshot& snap, std::map<std::string, kv_entry>& last, bool first,
            const std::string& key_watched) {
    std::printf("index %llu\n", static_cast<unsigned long long>(snap.index));
    std::map<std::string, kv_entry> now;
    for (const auto& e : snap.entries)
        now.emplace(e.key, e);
    for (const auto& [k, e] : now) {
        auto it = last.find(k);
        if (it == last.end())
            print_entry('+', e);
        else if (!(it->second == e))
            print_entry('~', e);
    }
    for (const auto& [k, e] : last)
        if (now.count(k) == 0)
            std::printf("- %s\n", k.c_str());
    if (first && now.empty())
        std::printf("- %s\n", key_watched.c_str());
    std::fflush(stdout);
    last = std::move(now);
}

asio::awaitable<std::tuple<error_code, watch_snapshot>> next_change(watch& w) {
    co_return co_await w.async_next(tuple_awaitable);
}

asio::awaitable<int> run_watch(client& consul, watch_target target, std::uint64_t count,
                               asio::signal_set& signals) {
    const std::string watched = target.path();
    {
        // Transient errors are retried quietly by the watch: a wrong address would just
        // hang, so check once that Consul answers.
        if (auto stop = co_await check_agent(consul, signals, "watching"))
            co_return *stop;
    }
    diagnostics diag;
    auto opts = watch_options{}.with_diag(&diag);
    watch w{consul, std::move(target), opts};
    std::map<std::string, kv_entry> last;
    for (std::uint64_t reports = 0; count == 0 || reports < count; ++reports) {
        auto r = co_await (next_change(w) || next_signal(signals));
        if (r.index() == 1)
            co_return exit_code::ok;
        auto& [ec, snap] = std::get<0>(r);
        if (ec) {
            std::fprintf(stderr, "Error watching '%s': %s\n", watched.c_str(),
                         conclave::error(ec, diag).what());
            co_return exit_code::error;
        }
        report(snap, last, reports == 0, watched);
    }
    co_return exit_code::ok;
}

} // namespace

int watch_command(args a) {
    bool as_prefix = false;
    std::uint64_t count = 0;
    http_flags http;
    flag_set flags;
    flags.add_bool("prefix", &as_prefix);
    flags.add_uint("count", &count);
    http.add_to(flags);
    std::vector<std::string_view> rest;
    if (auto stop = parse_or_usage(flags, a, watch_usage, rest))
        return *stop;
    if (rest.size() != 1)
        return usage_error(rest.empty() ? "Error! Missing key or prefix argument"
                                        : "Too many arguments (expected 1, got " +
                                              std::to_string(rest.size()) + ")",
                           watch_usage);
    const std::string path(rest[0]);
    const bool prefix = as_prefix || (!path.empty() && path.back() == '/');
    std::string error;
    auto cfg = http.make_config(flags, error);
    if (!cfg) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return exit_code::error;
    }
    asio::io_context ioc;
    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    std::optional<client> consul;
    try {
        consul.emplace(ioc.get_executor(), *cfg);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "Error connecting to Consul agent: %s\n", e.what());
        return exit_code::error;
    }
    auto target = prefix ? watch::prefix(path) : watch::key(path);
    return run_command(ioc, run_watch(*consul, std::move(target), count, signals), "watch");
}

} // namespace conclave::cli
