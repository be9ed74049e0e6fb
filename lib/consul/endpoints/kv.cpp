// SPDX-License-Identifier: BSL-1.0
#include "codec/json.hpp"
#include "consul/endpoints/kv.hpp"

#include <boost/json/parse.hpp>

namespace conclave::detail::endpoint {

namespace bhttp = boost::beast::http;
namespace json = boost::json;

namespace {

error_code invalid_key(diagnostics* diag, std::string_view key) {
    if (diag) {
        diag->http_status = 0;
        diag->server_message.clear();
        diag->client_message =
            "Invalid key '" + std::string(key) + "': a key must not begin with '/' or contain '//'";
    }
    return make_error_code(errc::invalid_argument);
}

// A read of `key` (one entry, or a prefix): its path and query. Reads drop one leading '/',
// as Go's client does.
error_code build_read(api_call& call, const std::string& key, const query_options& q) {
    auto path = kv_path(key, true);
    if (!path)
        return invalid_key(q.diag, key);
    call.path = std::move(*path);
    apply_query(call, q);
    return {};
}

// What every read does first: a 404 is an empty result, with the index to block on; any
// other status but 200 is an error. True when the body is left to decode.
template <class Result>
bool read_status(const api_call& call, const api_reply& reply, std::pair<error_code, Result>& out) {
    if (reply.status == 404) {
        out.second.meta = reply.meta;
        return false;
    }
    if (reply.status != 200) {
        out.first = status_error(call, reply);
        return false;
    }
    out.second.meta = reply.meta;
    return true;
}

} // namespace

error_code kv_get::build(api_call& call) const {
    call.endpoint = "kv_get";
    call.one_entry = true;
    return build_read(call, key, query);
}

std::pair<error_code, kv_get_result> kv_get::decode(const api_call& call, api_reply& reply) const {
    std::pair<error_code, kv_get_result> out;
    if (!read_status(call, reply, out))
        return out;
    std::vector<kv_entry> entries;
    if (!codec::parse_kv_entries(reply.body, entries) || entries.size() != 1)
        return {parse_error(call, "expected one KV entry"), {}};
    out.second.entry = std::move(entries.front());
    return out;
}

error_code kv_get_raw::build(api_call& call) const {
    call.endpoint = "kv_get";
    call.one_entry = true;
    call.flag("raw");
    return build_read(call, key, query);
}

std::pair<error_code, kv_raw_result> kv_get_raw::decode(const api_call& call,
                                                        api_reply& reply) const {
    std::pair<error_code, kv_raw_result> out;
    if (read_status(call, reply, out))
        out.second.value = std::move(reply.body);
    return out;
}

error_code kv_list::build(api_call& call) const {
    call.endpoint = "kv_list";
    call.flag("recurse");
    return build_read(call, prefix, query);
}

std::pair<error_code, kv_list_result> kv_list::decode(const api_call& call,
                                                      api_reply& reply) const {
    std::pair<error_code, kv_list_result> out;
    if (read_status(call, reply, out) && !codec::parse_kv_entries(reply.body, out.second.entries))
        return {parse_error(call, "bad KV list"), {}};
    return out;
}

error_code kv_keys::build(api_call& call) const {
    call.endpoint = "kv_keys";
    call.flag("keys");
    if (!options.separator.empty())
        call.param("separator", options.separator);
    return build_read(call, prefix, options.query);
}

std::pair<error_code, kv_keys_result> kv_keys::decode(const api_call& call,
                                                      api_reply& reply) const {
    std::pair<error_code, kv_keys_result> out;
    if (!read_status(call, reply, out))
        return out;
    error_code pec;
    auto v = json::parse(reply.body, pec);
    if (pec || !v.is_array())
        return {parse_error(call, "bad key list"), {}};
    for (const auto& k : v.get_array()) {
        if (!k.is_string())
            return {parse_error(call, "bad key list"), {}};
        out.second.keys.emplace_back(k.get_string());
    }
    return out;
}

std::pair<error_code, bool> decode_write_reply(const api_call& call, const api_reply& reply) {
    if (reply.status != 200)
        return {status_error(call, reply), false};
    std::string_view body = reply.body;
    while (!body.empty() && (body.back() == '\n' || body.back() == ' '))
        body.remove_suffix(1);
    if (body == "true")
        return {error_code{}, true};
    if (body == "false")
        return {error_code{}, false};
    return {parse_error(call, "expected true or false"), false};
}

error_code kv_put::build(api_call& call) {
    call.endpoint = "kv_put";
    call.method = bhttp::verb::put;
    apply_timeout(call, options.timeout);
    // A leading '/' is refused, not dropped, as Go's client does for a put.
    auto path = kv_path(key, false);
    if (!path || key.empty())
        return invalid_key(options.diag, key);
    const int modes = int(options.cas.has_value()) + int(!options.acquire.empty()) +
                      int(!options.release.empty());
    if (modes > 1) {
        if (options.diag)
            options.diag->client_message = "at most one of cas, acquire and release may be set";
        return make_error_code(errc::invalid_argument);
    }
    call.path = std::move(*path);
    call.one_entry = true; // true or false
    if (options.flags != 0)
        call.param("flags", std::to_string(options.flags));
    if (options.cas)
        call.param("cas", std::to_string(*options.cas));
    if (!options.acquire.empty())
        call.param("acquire", options.acquire);
    if (!options.release.empty())
        call.param("release", options.release);
    apply_options(call, options);
    call.body = std::move(value);
    call.content_type = "application/octet-stream";
    return {};
}

std::pair<error_code, bool> kv_put::decode(const api_call& call, api_reply& reply) const {
    return decode_write_reply(call, reply);
}

error_code kv_delete::build(api_call& call) const {
    call.endpoint = "kv_delete";
    call.method = bhttp::verb::delete_;
    apply_timeout(call, options.timeout);
    auto path = kv_path(key, true);
    if (!path)
        return invalid_key(options.diag, key);
    call.path = std::move(*path);
    call.one_entry = true; // true or false
    if (options.recurse)
        call.flag("recurse");
    if (options.cas)
        call.param("cas", std::to_string(*options.cas));
    apply_options(call, options);
    return {};
}

std::pair<error_code, bool> kv_delete::decode(const api_call& call, api_reply& reply) const {
    return decode_write_reply(call, reply);
}

} // namespace conclave::detail::endpoint
