// SPDX-License-Identifier: BSL-1.0
// `conclave watch [options] <key | prefix/>`: prints each change, one line per key, until
// interrupted (or -count reports), over conclave::watch. With -type, `consul watch`'s
// interface instead (typed_watch).
#include "cli/commands.hpp"
#include "cli/common/escape_value.hpp"
#include "cli/common/flags.hpp"
#include "cli/common/http_flags.hpp"
#include "cli/exit_codes.hpp"
#include "cli/run.hpp"
#include "cli/watch/states.hpp"
#include "cli/watch/typed.hpp"

#include <conclave/watch.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <cstdio>
#include <map>
#include <optional>

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

constexpr const char* watch_usage = R"(Usage: conclave watch [options] <key | prefix/>
       conclave watch -type=key -key=<key> [options] [handler...]
       conclave watch -type=keyprefix -prefix=<prefix> [options] [handler...]

  Prints the current state of a key (or of every key under a prefix: an argument ending
  in '/', or -prefix=<prefix> instead of the argument), then each change, until
  SIGINT/SIGTERM or -count reports. Every report starts with "index <X-Consul-Index>",
  followed by one line per key that changed:

    + <key>=<value>    created
    ~ <key>=<value>    changed (value, flags or lock holder)
    - <key>            deleted (or absent in the first report)

  A held key shows " [session <id>]" after its value. Values are printed on one line:
  '\', newlines and other control bytes are escaped (\\, \n, \xHH). Changes that happen
  between two reports are coalesced: each report has the latest state.

  With -type (as `consul watch`): the state as Consul's JSON, a KV object or null for
  -type=key, an array (null when empty) for -type=keyprefix. Values are base64. With a
  handler, it runs with the JSON on its stdin and CONSUL_INDEX in its environment, at once
  and after each change, one run at a time; conclave exits 1 when a run fails. Without
  one, the current state is printed (indented) and conclave exits.

  Exit status: 0 interrupted, -count reached or the state printed; 1 bad arguments, a
  handler that failed, or an error that retrying cannot fix (ACL denied, invalid key).
  Transient errors are retried quietly.

Options:

  -type=<key|keyprefix>    Consul's interface (above). Other types of consul watch are
                           not supported.
  -key=<key>               The key to watch (-type=key).
  -prefix=<prefix>         The prefix to watch (-type=keyprefix; without -type, instead
                           of the argument).
  -shell                   Run the handler with $SHELL -c (/bin/sh when SHELL is unset),
                           its arguments joined with spaces. Default true; -shell=false
                           runs the arguments directly (PATH lookup).
  -count=<n>               Exit after n reports or handler runs (the first state counts).
                           0: never.
  -help                    Show this help.

)";

void print_entry(char mark, const kv_entry& e) {
    std::string line = std::string(1, mark) + " " + e.key + "=" + escape_value(e.value);
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

asio::awaitable<int> run_watch(client& consul, watch_target target, std::uint64_t count,
                               asio::signal_set& signals) {
    const std::string watched = target.path();
    std::map<std::string, kv_entry> last;
    co_return co_await watch_states(
        consul, std::move(target), count, signals,
        [&](const watch_snapshot& snap, std::uint64_t n) -> asio::awaitable<std::optional<int>> {
            report(snap, last, n == 0, watched);
            co_return std::nullopt;
        });
}

// `consul watch`'s checks of -type, -key and -prefix, with its messages. Empty: valid.
std::string check_typed(const std::string& type, const flag_set& flags, const std::string& key,
                        const std::string& prefix) {
    if (type == "key") {
        if (flags.was_set("prefix"))
            return "Invalid parameters: [prefix]";
        if (key.empty())
            return "Must specify a single key to watch";
    } else if (type == "keyprefix") {
        if (flags.was_set("key"))
            return "Invalid parameters: [key]";
        if (prefix.empty())
            return "Must specify a single prefix to watch";
    } else {
        return type.empty() ? "Watch type must be specified" : "Unsupported watch type: " + type;
    }
    return {};
}

} // namespace

int watch_command(args a) {
    std::string type, key, prefix_flag;
    bool shell = true;
    std::uint64_t count = 0;
    http_flags http;
    flag_set flags;
    flags.add_string("type", &type);
    flags.add_string("key", &key);
    flags.add_string("prefix", &prefix_flag);
    flags.add_bool("shell", &shell);
    flags.add_uint("count", &count);
    http.add_to(flags);
    std::vector<std::string_view> rest;
    if (auto stop = parse_or_usage(flags, a, watch_usage, rest))
        return *stop;
    const bool typed = flags.was_set("type");
    if (typed) {
        if (const auto bad = check_typed(type, flags, key, prefix_flag); !bad.empty()) {
            std::fprintf(stderr, "%s\n", bad.c_str());
            return exit_code::error;
        }
    } else if (flags.was_set("key") || !shell) {
        return usage_error("-key and -shell need -type (consul watch's interface)", watch_usage);
    } else if (flags.was_set("prefix") && !rest.empty()) {
        // -prefix was a boolean before -type came: `-prefix cfg` still watches cfg/, but
        // `-prefix=true cfg` would now watch "true".
        return usage_error("-prefix names the prefix to watch: give it without an argument "
                           "(conclave watch -prefix=cfg/)",
                           watch_usage);
    } else if (!flags.was_set("prefix") && rest.size() != 1) {
        return usage_error(rest.empty() ? "Error! Missing key or prefix argument"
                                        : "Too many arguments (expected 1, got " +
                                              std::to_string(rest.size()) + ")",
                           watch_usage);
    }
    asio::io_context ioc;
    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    std::optional<client> consul;
    if (!http.open_client(flags, ioc, consul))
        return exit_code::error;
    if (typed) {
        typed_watch_settings settings;
        settings.target = type == "key" ? watch::key(key) : watch::prefix(prefix_flag);
        settings.handler.assign(rest.begin(), rest.end());
        settings.shell = shell;
        settings.count = count;
        return run_command(ioc, run_typed_watch(*consul, std::move(settings), signals), "watch");
    }
    const std::string path = flags.was_set("prefix") ? prefix_flag : std::string(rest[0]);
    const bool prefix = flags.was_set("prefix") || (!path.empty() && path.back() == '/');
    auto target = prefix ? watch::prefix(path) : watch::key(path);
    return run_command(ioc, run_watch(*consul, std::move(target), count, signals), "watch");
}

} // namespace conclave::cli
