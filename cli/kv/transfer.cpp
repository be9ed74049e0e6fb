// SPDX-License-Identifier: BSL-1.0
// `conclave kv export [prefix]` and `conclave kv import <data | @path | ->`: a prefix of the
// store as the JSON of `consul kv export`, and back. The two tools read each other's files.
#include "cli/common/kv_json.hpp"
#include "cli/kv/common.hpp"
#include "codec/go/base64.hpp"
#include "codec/json.hpp"

#include <boost/json/parse.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace conclave::cli {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

struct import_entry {
    std::string key;
    std::uint64_t flags = 0;
    std::string value; ///< decoded
};

asio::awaitable<int> do_export(client& consul, std::string prefix, bool stale) {
    diagnostics d;
    auto q = query_options{}.with_diag(&d).with_mode(stale ? consistency::stale
                                                           : consistency::default_mode);
    auto [ec, res] = co_await consul.async_kv_list(prefix, q, kv_tuple_awaitable);
    if (ec) {
        std::fprintf(stderr, "Error querying Consul agent: %s\n",
                     consul_error(ec, d, consul).c_str());
        co_return exit_code::error;
    }
    std::printf("%s\n", export_json(res.entries).c_str());
    co_return exit_code::ok;
}

// One at a time, in the file's order, stopping at the first failure (as consul kv import).
asio::awaitable<int> do_import(client& consul, std::vector<import_entry> entries) {
    for (auto& e : entries) {
        diagnostics d;
        auto o = kv_put_options{}.with_flags(e.flags).with_diag(&d);
        auto [ec, written] =
            co_await consul.async_kv_put(e.key, std::move(e.value), o, kv_tuple_awaitable);
        if (ec || !written) {
            std::fprintf(stderr, "Error! Failed writing data for key %s: %s\n", e.key.c_str(),
                         ec ? consul_error(ec, d, consul).c_str() : "not written");
            co_return exit_code::error;
        }
        std::printf("Imported: %s\n", e.key.c_str());
        std::fflush(stdout);
    }
    co_return exit_code::ok;
}

// `consul kv import`'s DATA: the JSON itself, "@path" for a file's contents, "-" for stdin.
// False (the message printed) when it cannot be read.
bool read_data(const std::string& arg, std::string& out) {
    if (arg == "-") {
        std::stringstream ss;
        ss << std::cin.rdbuf();
        out = ss.str();
        return true;
    }
    if (arg.empty() || arg[0] != '@') {
        out = arg;
        return true;
    }
    const std::string path = arg.substr(1);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "Error! Failed to read file: open %s: %s\n", path.c_str(),
                     std::strerror(errno));
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return true;
}

// The entries of `consul kv export`'s JSON, values decoded. False (the message printed)
// when it is not such JSON or a value is not base64.
bool parse_entries(const std::string& text, std::vector<import_entry>& out) {
    boost::system::error_code ec;
    const json::value doc = json::parse(text, ec);
    if (ec || !doc.is_array()) {
        std::fprintf(stderr, "Cannot unmarshal data: %s\n",
                     ec ? ec.message().c_str() : "not a JSON array");
        return false;
    }
    for (const auto& item : doc.get_array()) {
        const auto* o = item.if_object();
        const auto* key = o ? o->if_contains("key") : nullptr;
        const auto* flags = o ? o->if_contains("flags") : nullptr;
        const auto* value = o ? o->if_contains("value") : nullptr;
        const auto flags_number = flags ? codec::json_u64(*flags) : std::optional<std::uint64_t>{0};
        if (!key || !key->is_string() || !flags_number || (value && !value->is_string())) {
            std::fprintf(stderr, "Cannot unmarshal data: each entry needs \"key\" (a string), "
                                 "\"flags\" (a number) and \"value\" (base64)\n");
            return false;
        }
        import_entry e;
        e.key = std::string(key->get_string());
        e.flags = *flags_number;
        if (value) {
            std::size_t bad_at = 0;
            auto decoded = codec::go::base64_decode(value->get_string(), &bad_at);
            if (!decoded) {
                std::fprintf(stderr, "Error base 64 decoding value for key %s: %s\n", e.key.c_str(),
                             codec::go::base64_error(bad_at).c_str());
                return false;
            }
            e.value = std::move(*decoded);
        }
        out.push_back(std::move(e));
    }
    return true;
}

} // namespace

int export_command(args a) {
    kv_common c;
    bool stale = false;
    c.flags.add_bool("stale", &stale);
    std::vector<std::string_view> rest;
    if (auto code = kv_parse(c, a, rest))
        return *code;
    std::string prefix = rest.empty() ? "" : std::string(rest[0]);
    return with_client(c, [&](client& consul) { return do_export(consul, prefix, stale); });
}

int import_command(args a) {
    kv_common c;
    std::vector<std::string_view> rest;
    if (auto code = kv_parse(c, a, rest))
        return *code;
    if (rest.empty())
        return kv_usage_error("Error! Missing DATA argument");
    std::string text;
    std::vector<import_entry> entries;
    if (!read_data(std::string(rest[0]), text) || !parse_entries(text, entries))
        return exit_code::error;
    return with_client(c, [&](client& consul) { return do_import(consul, std::move(entries)); });
}

} // namespace conclave::cli
