// SPDX-License-Identifier: BSL-1.0
// `conclave kv get|put|delete`: enough of `consul kv` to operate and debug (same output
// and messages for what both have).
#include "commands.hpp"
#include "exit_codes.hpp"
#include "flags.hpp"
#include "http_flags.hpp"
#include "run.hpp"

#include <conclave/client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

constexpr const char* kv_usage =
    R"(Usage: conclave kv <subcommand> [options] <key or prefix> [<value>]

  Reads and writes Consul's KV store. Exit status: 0 done, 1 bad arguments, a
  missing key (get), a failed check-and-set, or a failure to reach Consul.

Subcommands:

  get [-recurse | -keys [-separator=/]] [-detailed] <key or prefix>
      Prints the value (raw). -recurse: "key:value" for every key under the prefix.
      -keys: the key names under the prefix, collapsed at -separator (default "/";
      -separator="" lists every key). -detailed: every field of each entry.
  put [-flags=<uint>] [-cas -modify-index=<n>] <key> [<value>]
      Writes the value: the argument, "-" for stdin, "@path" for a file's contents,
      nothing for an empty value. -cas writes only if the key's ModifyIndex is <n>
      (0: only if it does not exist).
  delete [-recurse] [-cas -modify-index=<n>] <key or prefix>
      Deletes the key (or every key under the prefix); -cas only at that ModifyIndex.

Options: -help, and the HTTP API options below on every subcommand.

)";

struct kv_common {
    flag_set flags;
    http_flags http;
    kv_common() { http.add_to(flags); }
};

int usage_error(const std::string& message) {
    return cli::usage_error(message, kv_usage);
}

std::string consul_error(const error_code& ec, const diagnostics& d, const client& consul) {
    std::string text = ec.message();
    if (!d.server_message.empty())
        text += ": " + d.server_message;
    if (ec == errc::permission_denied && !d.client_message.empty())
        text += " [" + d.client_message + "]"; // which permission the token lacks
    if (!is_retryable(ec))
        return text;
    return text + " (Consul at " + consul.config().describe_address() +
           "; set -http-addr or CONSUL_HTTP_ADDR)";
}

void print_detailed(const kv_entry& e) {
    std::printf("CreateIndex      %llu\nFlags            %llu\nKey              %s\n"
                "LockIndex        %llu\nModifyIndex      %llu\nSession          %s\n"
                "Value            %s\n",
                (unsigned long long)e.create_index, (unsigned long long)e.flags, e.key.c_str(),
                (unsigned long long)e.lock_index, (unsigned long long)e.modify_index,
                e.session.empty() ? "-" : e.session.c_str(), e.value.c_str());
}

struct get_request {
    get_request() = default; // not an aggregate: it is a coroutine's parameter (g++ 12)
    std::string key;
    bool recurse = false, keys = false, detailed = false;
    std::string separator = "/";
};

asio::awaitable<int> do_get(client& consul, get_request r) {
    diagnostics d;
    auto q = query_options{}.with_diag(&d);
    if (r.keys) {
        auto o = kv_keys_options{}.with_query(q).with_separator(r.separator);
        auto [ec, res] = co_await consul.async_kv_keys(r.key, o, tuple_awaitable);
        if (ec) {
            std::fprintf(stderr, "Error querying Consul agent: %s\n",
                         consul_error(ec, d, consul).c_str());
            co_return exit_code::error;
        }
        for (const auto& k : res.keys)
            std::printf("%s\n", k.c_str());
        co_return exit_code::ok;
    }
    if (r.recurse) {
        auto [ec, res] = co_await consul.async_kv_list(r.key, q, tuple_awaitable);
        if (ec) {
            std::fprintf(stderr, "Error querying Consul agent: %s\n",
                         consul_error(ec, d, consul).c_str());
            co_return exit_code::error;
        }
        for (std::size_t i = 0; i < res.entries.size(); ++i) {
            if (r.detailed) {
                print_detailed(res.entries[i]);
                if (i + 1 < res.entries.size())
                    std::printf("\n");
            } else {
                std::printf("%s:%s\n", res.entries[i].key.c_str(), res.entries[i].value.c_str());
            }
        }
        co_return exit_code::ok;
    }
    auto [ec, res] = co_await consul.async_kv_get(r.key, q, tuple_awaitable);
    if (ec) {
        std::fprintf(stderr, "Error querying Consul agent: %s\n",
                     consul_error(ec, d, consul).c_str());
        co_return exit_code::error;
    }
    if (!res.entry) {
        std::fprintf(stderr, "Error! No key exists at: %s\n", r.key.c_str());
        co_return exit_code::error;
    }
    if (r.detailed)
        print_detailed(*res.entry);
    else
        std::printf("%s\n", res.entry->value.c_str());
    co_return exit_code::ok;
}

asio::awaitable<int> do_put(client& consul, std::string key, std::string value, kv_put_options o) {
    diagnostics d;
    o.with_diag(&d);
    auto [ec, written] = co_await consul.async_kv_put(key, std::move(value), o, tuple_awaitable);
    if (ec) {
        std::fprintf(stderr, "Error! Failed writing data: %s\n",
                     consul_error(ec, d, consul).c_str());
        co_return exit_code::error;
    }
    if (!written) {
        std::fprintf(stderr, "Error! Did not write to %s: CAS failed\n", key.c_str());
        co_return exit_code::error;
    }
    std::printf("Success! Data written to: %s\n", key.c_str());
    co_return exit_code::ok;
}

asio::awaitable<int> do_delete(client& consul, std::string key, kv_delete_options o) {
    diagnostics d;
    o.with_diag(&d);
    const bool recurse = o.recurse;
    auto [ec, deleted] = co_await consul.async_kv_delete(key, o, tuple_awaitable);
    if (ec) {
        std::fprintf(stderr, "Error! Did not delete key %s: %s\n", key.c_str(),
                     consul_error(ec, d, consul).c_str());
        co_return exit_code::error;
    }
    if (!deleted) {
        std::fprintf(stderr, "Error! Did not delete key %s: CAS failed\n", key.c_str());
        co_return exit_code::error;
    }
    if (recurse)
        std::printf("Success! Deleted keys with prefix: %s\n", key.c_str());
    else
        std::printf("Success! Deleted key: %s\n", key.c_str());
    co_return exit_code::ok;
}

// Parses the flags; returns an exit status when the command must stop there.
std::optional<int> parse(kv_common& c, args a, std::vector<std::string_view>& rest) {
    return parse_or_usage(c.flags, a, kv_usage, rest);
}

// Runs `body` with a client built from the environment and the HTTP flags.
template <class Body>
int with_client(kv_common& c, Body body) {
    std::string error;
    auto cfg = c.http.make_config(c.flags, error);
    if (!cfg) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return exit_code::error;
    }
    asio::io_context ioc;
    std::optional<client> consul;
    try {
        consul.emplace(ioc.get_executor(), *cfg);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "Error connecting to Consul agent: %s\n", e.what());
        return exit_code::error;
    }
    return run_command(ioc, body(*consul), "kv");
}

int get_command(args a) {
    kv_common c;
    get_request r;
    c.flags.add_bool("recurse", &r.recurse);
    c.flags.add_bool("keys", &r.keys);
    c.flags.add_bool("detailed", &r.detailed);
    c.flags.add_string("separator", &r.separator);
    std::vector<std::string_view> rest;
    if (auto code = parse(c, a, rest))
        return *code;
    if (rest.size() > 1)
        return usage_error("Too many arguments (expected 1, got " + std::to_string(rest.size()) +
                           ")");
    if (rest.empty() && !r.recurse && !r.keys)
        return usage_error("Error! Missing KEY argument");
    if (r.recurse && r.keys)
        return usage_error("Cannot specify both -recurse and -keys");
    r.key = rest.empty() ? "" : std::string(rest[0]);
    if (!r.keys)
        r.separator.clear();
    return with_client(c, [&](client& consul) { return do_get(consul, r); });
}

int put_command(args a) {
    kv_common c;
    std::uint64_t flags_value = 0, modify_index = 0;
    bool cas = false;
    c.flags.add_uint("flags", &flags_value);
    c.flags.add_bool("cas", &cas);
    c.flags.add_uint("modify-index", &modify_index);
    std::vector<std::string_view> rest;
    if (auto code = parse(c, a, rest))
        return *code;
    if (rest.empty())
        return usage_error("Error! Missing KEY argument");
    if (rest.size() > 2)
        return usage_error("Too many arguments (expected 1 or 2, got " +
                           std::to_string(rest.size()) + ")");
    if (cas && !c.flags.was_set("modify-index"))
        return usage_error("Must specify -modify-index with -cas!");
    std::string value = rest.size() == 2 ? std::string(rest[1]) : std::string();
    if (value == "-") {
        std::stringstream ss;
        ss << std::cin.rdbuf();
        value = ss.str();
    } else if (!value.empty() && value[0] == '@') {
        std::ifstream in(value.substr(1), std::ios::binary);
        if (!in) {
            std::fprintf(stderr,
                         "Error! Cannot read %s (for a value starting with '@', use "
                         "\"-\" and stdin)\n",
                         value.substr(1).c_str());
            return exit_code::error;
        }
        std::stringstream ss;
        ss << in.rdbuf();
        value = ss.str();
    }
    auto o = kv_put_options{}.with_flags(flags_value);
    if (cas)
        o.with_cas(modify_index);
    std::string key(rest[0]);
    return with_client(c, [&](client& consul) { return do_put(consul, key, value, o); });
}

int delete_command(args a) {
    kv_common c;
    std::uint64_t modify_index = 0;
    bool cas = false, recurse = false;
    c.flags.add_bool("recurse", &recurse);
    c.flags.add_bool("cas", &cas);
    c.flags.add_uint("modify-index", &modify_index);
    std::vector<std::string_view> rest;
    if (auto code = parse(c, a, rest))
        return *code;
    if (rest.size() > 1)
        return usage_error("Too many arguments (expected 1, got " + std::to_string(rest.size()) +
                           ")");
    if (rest.empty() && !recurse)
        return usage_error("Error! Missing KEY argument");
    if (cas && !c.flags.was_set("modify-index"))
        return usage_error("Must specify -modify-index with -cas!");
    if (cas && recurse)
        return usage_error("Cannot specify both -cas and -recurse!");
    auto o = kv_delete_options{}.with_recurse(recurse);
    if (cas)
        o.with_cas(modify_index);
    std::string key = rest.empty() ? "" : std::string(rest[0]);
    return with_client(c, [&](client& consul) { return do_delete(consul, key, o); });
}

} // namespace

int kv_command(args a) {
    if (a.empty()) {
        std::fputs(kv_usage, stderr);
        return exit_code::error;
    }
    const std::string_view sub = a[0];
    if (sub == "-h" || sub == "-help" || sub == "--help") {
        std::printf("%s%s", kv_usage, http_flags_usage);
        return exit_code::ok;
    }
    const args rest = a.subspan(1);
    if (sub == "get")
        return get_command(rest);
    if (sub == "put")
        return put_command(rest);
    if (sub == "delete")
        return delete_command(rest);
    return usage_error("Unknown kv subcommand '" + std::string(sub) + "': use get, put or delete");
}

} // namespace conclave::cli
