// SPDX-License-Identifier: BSL-1.0
// `conclave kv get|put|delete`: enough of `consul kv` to operate and debug (same output
// and messages for what both have). export and import: transfer.cpp.
#include "cli/kv/common.hpp"
#include "codec/go/base64.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

constexpr auto tuple_awaitable = kv_tuple_awaitable;

// -base64 shows values base64-encoded (binary values, scripts that decode them).
std::string shown(const std::string& value, bool base64) {
    return base64 ? codec::go::base64_encode(value) : value;
}

// `prefix` then the value and a newline; fwrite, since a value may hold NUL bytes.
void print_value(const std::string& prefix, const std::string& value) {
    std::fwrite(prefix.data(), 1, prefix.size(), stdout);
    std::fwrite(value.data(), 1, value.size(), stdout);
    std::fputc('\n', stdout);
}

void print_detailed(const kv_entry& e, bool base64) {
    std::printf("CreateIndex      %llu\nFlags            %llu\nKey              %s\n"
                "LockIndex        %llu\nModifyIndex      %llu\nSession          %s\n"
                "Value            %s\n",
                (unsigned long long)e.create_index, (unsigned long long)e.flags, e.key.c_str(),
                (unsigned long long)e.lock_index, (unsigned long long)e.modify_index,
                e.session.empty() ? "-" : e.session.c_str(), shown(e.value, base64).c_str());
}

struct get_request {
    get_request() = default; // not an aggregate: it is a coroutine's parameter (g++ 12)
    std::string key;
    bool recurse = false, keys = false, detailed = false, base64 = false, stale = false;
    std::string separator = "/";
};

asio::awaitable<int> do_get(client& consul, get_request r) {
    diagnostics d;
    auto q = query_options{}.with_diag(&d).with_mode(r.stale ? consistency::stale
                                                             : consistency::default_mode);
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
                print_detailed(res.entries[i], r.base64);
                if (i + 1 < res.entries.size())
                    std::printf("\n");
            } else {
                print_value(res.entries[i].key + ":", shown(res.entries[i].value, r.base64));
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
        print_detailed(*res.entry, r.base64);
    else
        print_value("", shown(res.entry->value, r.base64));
    co_return exit_code::ok;
}

asio::awaitable<int> do_put(client& consul, std::string key, std::string value, kv_put_options o) {
    diagnostics d;
    o.with_diag(&d);
    const bool acquire = !o.acquire.empty(), release = !o.release.empty();
    auto [ec, written] = co_await consul.async_kv_put(key, std::move(value), o, tuple_awaitable);
    if (ec) {
        std::fprintf(stderr, "Error! Failed writing data: %s\n",
                     consul_error(ec, d, consul).c_str());
        co_return exit_code::error;
    }
    // consul kv put's texts.
    if (!written) {
        if (acquire)
            std::fputs("Error! Did not acquire lock\n", stderr);
        else if (release)
            std::fputs("Error! Did not release lock\n", stderr);
        else
            std::fprintf(stderr, "Error! Did not write to %s: CAS failed\n", key.c_str());
        co_return exit_code::error;
    }
    if (acquire)
        std::printf("Success! Lock acquired on: %s\n", key.c_str());
    else if (release)
        std::printf("Success! Lock released on: %s\n", key.c_str());
    else
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

int get_command(args a) {
    kv_common c;
    get_request r;
    c.flags.add_bool("recurse", &r.recurse);
    c.flags.add_bool("keys", &r.keys);
    c.flags.add_bool("detailed", &r.detailed);
    c.flags.add_string("separator", &r.separator);
    c.flags.add_bool("base64", &r.base64);
    c.flags.add_bool("stale", &r.stale);
    std::vector<std::string_view> rest;
    if (auto code = kv_parse(c, a, rest))
        return *code;
    if (rest.empty() && !r.recurse && !r.keys)
        return kv_usage_error("Error! Missing KEY argument");
    if (r.recurse && r.keys)
        return kv_usage_error("Cannot specify both -recurse and -keys");
    r.key = rest.empty() ? "" : std::string(rest[0]);
    if (!r.keys)
        r.separator.clear();
    return with_client(c, [&](client& consul) { return do_get(consul, r); });
}

int put_command(args a) {
    kv_common c;
    std::uint64_t flags_value = 0, modify_index = 0;
    bool cas = false, base64 = false, acquire = false, release = false;
    std::string session;
    c.flags.add_uint("flags", &flags_value);
    c.flags.add_bool("base64", &base64);
    c.flags.add_bool("cas", &cas);
    c.flags.add_uint("modify-index", &modify_index);
    c.flags.add_string("session", &session);
    c.flags.add_bool("acquire", &acquire);
    c.flags.add_bool("release", &release);
    std::vector<std::string_view> rest;
    if (auto code = kv_parse(c, a, rest, 2))
        return *code;
    if (rest.empty())
        return kv_usage_error("Error! Missing KEY argument");
    if ((acquire || release) && session.empty())
        return kv_usage_error("Error! Missing -session (required with -acquire and -release)");
    if (cas && !c.flags.was_set("modify-index"))
        return kv_usage_error("Must specify -modify-index with -cas!");
    // Consul refuses them together; consul kv put would do the first of -cas, -acquire,
    // -release and ignore the others.
    if (int(cas) + int(acquire) + int(release) > 1)
        return kv_usage_error("Cannot specify more than one of -cas, -acquire and -release!");
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
    if (base64) {
        std::size_t bad_at = 0;
        auto decoded = codec::go::base64_decode(value, &bad_at);
        if (!decoded) {
            // consul kv put's text (which then writes an empty value; this writes nothing).
            std::fprintf(stderr, "Error! Cannot base 64 decode data: %s\n",
                         codec::go::base64_error(bad_at).c_str());
            return exit_code::error;
        }
        value = std::move(*decoded);
    }
    auto o = kv_put_options{}.with_flags(flags_value);
    if (cas)
        o.with_cas(modify_index);
    // -session alone writes no session, as in consul kv put: a plain write keeps the key's.
    if (acquire)
        o.with_acquire(session);
    if (release)
        o.with_release(session);
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
    if (auto code = kv_parse(c, a, rest))
        return *code;
    if (rest.empty() && !recurse)
        return kv_usage_error("Error! Missing KEY argument");
    if (cas && !c.flags.was_set("modify-index"))
        return kv_usage_error("Must specify -modify-index with -cas!");
    if (cas && recurse)
        return kv_usage_error("Cannot specify both -cas and -recurse!");
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
    if (sub == "export")
        return export_command(rest);
    if (sub == "import")
        return import_command(rest);
    return kv_usage_error("Unknown kv subcommand '" + std::string(sub) +
                          "': use get, put, delete, export or import");
}

} // namespace conclave::cli
