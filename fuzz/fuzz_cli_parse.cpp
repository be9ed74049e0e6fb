// SPDX-License-Identifier: BSL-1.0
// fuzz_cli_parse: what the `conclave` command reads from its command line and environment,
// as scripts and users write it: Go-style flags (cli/common/flags.cpp, shared by lock, elect, kv
// and watch), key paths (cli/common/key_path.cpp), -http-addr / CONSUL_HTTP_ADDR
// (apply_http_addr), the CONSUL_* environment (config_from_env) and Go durations
// (codec/go/duration.cpp, time.ParseDuration's rules, also what Consul's TTL and LockDelay
// texts go through).
//
// Input: byte 0 picks what is parsed; the rest is split at '\n' into the arguments (or
// NAME=value environment lines, or taken whole as one duration):
//   0 lock, 1 elect, 2 kv get, 3 kv put, 4 kv delete, 5 watch: that command's flags (the
//     flag_set built as the command builds it, its HTTP flags included), then its key path
//     cleaned and -http-addr applied as the command does;
//   6 a duration;
//   7 the CONSUL_* environment (CONSUL_HTTP_TOKEN_FILE left out: it names a file to read).
// Checked: a parsed duration formats to text that parses back to it (Go's
// ParseDuration(d.String()) == d); a cleaned key path is clean and cleaning it again
// changes nothing. The agent command's own flag loop (cli/agent/command.cpp) is inside the
// command, which starts an agent: not reachable here.
#include "cli/common/flags.hpp"
#include "cli/common/http_flags.hpp"
#include "cli/common/key_path.hpp"
#include "cli/elect/flags.hpp"
#include "cli/lock/flags.hpp"
#include "codec/go/duration.hpp"

#include <conclave/config.hpp>

#include <boost/system/system_error.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace conclave;
using namespace conclave::cli;
using std::chrono::nanoseconds;

[[noreturn]] void fail(const char* what, std::string_view input) {
    std::fprintf(stderr, "fuzz_cli_parse: %s: '%.*s'\n", what, int(input.size()), input.data());
    std::abort();
}

void check_duration(nanoseconds d) {
    const std::string text = codec::go::format_duration(d);
    const auto again = codec::go::parse_duration(text);
    if (!again.value || *again.value != d)
        fail("format_duration's text does not parse back to the same duration", text);
    (void)codec::go::format_wait(d);
}

void check_key_path(std::string_view given) {
    const std::string key = clean_key_path(given);
    if (key.starts_with('/') || key.ends_with('/') || key.find("//") != std::string::npos)
        fail("clean_key_path left a leading, trailing or double '/'", key);
    for (std::size_t at = 0; at <= key.size() && !key.empty();) {
        auto end = key.find('/', at);
        if (end == std::string::npos)
            end = key.size();
        const std::string_view part = std::string_view(key).substr(at, end - at);
        if (part == "." || part == "..")
            fail("clean_key_path left a '.' or '..' segment", key);
        at = end + 1;
    }
    if (clean_key_path(key) != key)
        fail("clean_key_path is not idempotent", key);
}

// The flags of each command: lock's and elect's as the commands declare them
// (cli/lock/flags.hpp, cli/elect/flags.hpp); kv's and watch's as cli/kv and cli/watch do.
struct command_flags {
    flag_set flags;
    lock_flags lock;
    elect_flags elect;
    http_flags kv_http;
    http_flags* http = &kv_http; ///< the command's HTTP flags
    bool recurse = false, keys = false, detailed = false, cas = false, prefix = false;
    std::uint64_t flags_value = 0, modify_index = 0, count = 0;
    std::string separator;

    explicit command_flags(unsigned which) {
        switch (which) {
        case 0:
            lock.add_to(flags);
            http = &lock.held.http;
            return;
        case 1:
            elect.add_to(flags);
            http = &elect.held.http;
            return;
        case 2: // kv get
            flags.add_bool("recurse", &recurse);
            flags.add_bool("keys", &keys);
            flags.add_bool("detailed", &detailed);
            flags.add_string("separator", &separator);
            break;
        case 3: // kv put
            flags.add_uint("flags", &flags_value);
            flags.add_bool("cas", &cas);
            flags.add_uint("modify-index", &modify_index);
            break;
        case 4: // kv delete
            flags.add_bool("recurse", &recurse);
            flags.add_bool("cas", &cas);
            flags.add_uint("modify-index", &modify_index);
            break;
        default: // watch
            flags.add_bool("prefix", &prefix);
            flags.add_uint("count", &count);
            break;
        }
        kv_http.add_to(flags);
    }
};

std::vector<std::string_view> split_lines(std::string_view s) {
    std::vector<std::string_view> out;
    if (s.empty())
        return out;
    for (;;) {
        const auto nl = s.find('\n');
        out.push_back(s.substr(0, nl));
        if (nl == std::string_view::npos)
            return out;
        s.remove_prefix(nl + 1);
    }
}

void parse_command(unsigned which, std::string_view text) {
    command_flags c(which);
    const auto args = split_lines(text);
    auto parsed = c.flags.parse(args);
    if (parsed.status != flag_set::outcome::ok)
        return;
    for (const auto d : {c.lock.timeout, c.lock.held.ttl, c.lock.held.lock_delay, c.elect.held.ttl,
                         c.elect.held.lock_delay})
        check_duration(d);
    if (!parsed.rest.empty()) {
        std::string_view key = parsed.rest[0];
        while (!key.empty() && key.front() == '/')
            key.remove_prefix(1);
        check_key_path(key);
    }
    if (c.flags.was_set("http-addr") && !c.http->http_addr.empty()) {
        client_config cfg;
        cfg.tls.enabled = c.flags.was_set("ca-file");
        (void)apply_http_addr(cfg, c.http->http_addr);
    }
}

void parse_environment(std::string_view text) {
    std::map<std::string, std::string, std::less<>> env;
    for (const auto line : split_lines(text)) {
        const auto eq = line.find('=');
        if (eq != std::string_view::npos && line.substr(0, eq) != "CONSUL_HTTP_TOKEN_FILE")
            env.emplace(line.substr(0, eq), line.substr(eq + 1));
    }
    try {
        (void)config_from_env([&](std::string_view name) -> std::optional<std::string> {
            const auto it = env.find(name);
            return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
        });
    } catch (const boost::system::system_error&) {
        // Documented: a value that cannot be used fails with a message naming it.
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1)
        return 0;
    const unsigned which = data[0] % 8;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (which) {
    case 6:
        if (const auto d = codec::go::parse_duration(text); d.value)
            check_duration(*d.value);
        break;
    case 7:
        parse_environment(text);
        break;
    default:
        parse_command(which, text);
        break;
    }
    return 0;
}
