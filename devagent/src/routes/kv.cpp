// SPDX-License-Identifier: BSL-1.0
// /v1/kv/<key>: agent/kvs_endpoint.go (HTTP) + agent/consul/kvs_endpoint.go (RPC).
#include "codec/go/strconv.hpp"
#include "codec/json.hpp"
#include "devagent/src/routes/routes.hpp"

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include <span>

namespace conclave::dev::detail {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr std::string_view kv_prefix = "/v1/kv/";

// The query parameter `name`, when given, as strconv.ParseUint reads it, into `out`.
// Returns the answer to one it cannot read: its error, with the 500 of Consul's handler.
std::optional<http_response> query_uint(const http_request& req, const char* name,
                                        std::uint64_t& out) {
    if (!req.query.has(name))
        return std::nullopt;
    const auto v = codec::go::parse_uint(req.query.get(name));
    if (!v.value)
        return text_response(500, v.error);
    out = *v.value;
    return std::nullopt;
}

// conflictingFlags: at most one of the flags may be present.
std::optional<http_response> conflicting(const http_request& req,
                                         std::initializer_list<std::string_view> flags) {
    bool found = false;
    for (const auto flag : flags) {
        if (!req.query.has(flag))
            continue;
        if (found)
            return text_response(400, "Conflicting flags: " + req.query.encode());
        found = true;
    }
    return std::nullopt;
}

// The answer to a KV read from the entries it found.
http_response kv_get_answer(const http_request& req, bool recurse,
                            std::span<const kv_entry* const> entries, std::uint64_t index) {
    http_response resp;
    if (entries.empty()) {
        resp.status = 404;
    } else if (req.query.has("raw") && !recurse) {
        resp.body = entries.front()->value;
        if (!resp.body.empty())
            resp.set("Content-Type", sniff_content_type(resp.body));
    } else {
        json_scratch scratch;
        json::array list(scratch.sp());
        list.reserve(entries.size());
        for (const kv_entry* e : entries)
            list.emplace_back(codec::kv_entry_to_json(*e, true, scratch.sp()));
        resp = json_response(std::move(list));
    }
    set_meta(resp, index);
    return resp;
}

// A GET's refusals before reading: no key without ?recurse, a namespace, a foreign datacenter.
std::optional<http_response> kv_get_refused(agent_impl& a, const http_request& req,
                                            std::string_view key, bool recurse) {
    if (!recurse && key.empty())
        return text_response(400, "Missing key name");
    if (auto refused = namespace_refused(req))
        return refused;
    if (foreign_dc(a, req))
        return no_path_to_dc();
    return std::nullopt;
}

// A GET without an index: one evaluation, as run_blocking does it, answered straight from the
// store's entries (nothing runs between reading and writing them), without copies.
http_response kv_get_now(agent_impl& a, const http_request& req, std::string_view key) {
    const bool recurse = req.query.has("recurse");
    if (auto refused = kv_get_refused(a, req, key, recurse))
        return std::move(*refused);
    if (recurse) {
        const auto r = a.state.kv_list(key, nullptr);
        return kv_get_answer(req, recurse, r.entries, std::max<std::uint64_t>(r.index, 1));
    }
    const auto r = a.state.kv_get(key, nullptr);
    const std::span<const kv_entry* const> found(&r.entry, r.entry ? 1 : 0);
    return kv_get_answer(req, recurse, found, std::max<std::uint64_t>(r.index, 1));
}

// A blocking GET (an index given).
asio::awaitable<http_response> kv_get(agent_impl& a, const http_request& req,
                                      const query_opts& opts, std::string_view key,
                                      disconnect_probe* probe) {
    const bool recurse = req.query.has("recurse");
    if (auto refused = kv_get_refused(a, req, key, recurse))
        co_return std::move(*refused);

    // Blocking: the last evaluation's entries are answered after waiting, so they are copies.
    std::vector<kv_entry> entries;
    const query_eval eval = [&](watch_set* ws) -> std::uint64_t {
        entries.clear();
        if (recurse) {
            auto r = a.state.kv_list(key, ws);
            for (const kv_entry* e : r.entries)
                entries.push_back(*e);
            return r.index;
        }
        auto r = a.state.kv_get(key, ws);
        if (r.entry)
            entries.push_back(*r.entry);
        return r.index;
    };
    const std::uint64_t index = co_await run_blocking(a.hub, a.rng, probe, opts, eval);
    std::vector<const kv_entry*> found;
    found.reserve(entries.size());
    for (const auto& e : entries)
        found.push_back(&e);
    co_return kv_get_answer(req, recurse, found, index);
}

asio::awaitable<http_response> kv_get_keys(agent_impl& a, const http_request& req,
                                           const query_opts& opts, std::string_view prefix,
                                           disconnect_probe* probe) {
    // Views into the request, which outlives the wait (a copy would not count against
    // request_memory_limit).
    std::string_view separator;
    if (const std::string* s = req.query.find("seperator"))
        separator = *s;
    if (const std::string* s = req.query.find("separator"))
        separator = *s;
    if (auto refused = namespace_refused(req))
        co_return std::move(*refused);
    if (foreign_dc(a, req))
        co_return no_path_to_dc();

    std::vector<std::string> keys;
    const query_eval eval = [&](watch_set* ws) -> std::uint64_t {
        auto r = a.state.kv_keys(prefix, separator, ws);
        keys = std::move(r.keys);
        return r.index;
    };
    const std::uint64_t index = co_await run_blocking(a.hub, a.rng, probe, opts, eval);

    http_response resp;
    if (keys.empty() && !prefix.empty()) {
        resp.status = 404;
    } else {
        json::array out;
        for (auto& k : keys)
            out.emplace_back(std::move(k));
        resp = json_response(out);
    }
    set_meta(resp, index);
    co_return resp;
}

http_response kv_put(agent_impl& a, const http_request& req, std::string_view key) {
    if (auto refused = namespace_refused(req))
        return std::move(*refused);
    if (auto c = conflicting(req, {"cas", "acquire", "release"}))
        return std::move(*c);
    if (key.empty())
        return text_response(400, "Missing key name");

    kv_entry e;
    e.key = key;
    kv_op op = kv_op::set;
    if (auto bad = query_uint(req, "flags", e.flags))
        return std::move(*bad);
    if (req.query.has("cas")) {
        if (auto bad = query_uint(req, "cas", e.modify_index))
            return std::move(*bad);
        op = kv_op::cas;
    }
    if (req.query.has("acquire")) {
        e.session = req.query.get("acquire");
        op = kv_op::lock;
    }
    if (req.query.has("release")) {
        e.session = req.query.get("release");
        op = kv_op::unlock;
    }
    const std::int64_t max = body_limit(a.cfg, req);
    const std::int64_t size =
        req.content_length >= 0 ? req.content_length : std::int64_t(req.body.size());
    if (size > max) {
        auto r = text_response(413, "Request body(" + std::to_string(size) +
                                        " bytes) too large, max size: " + std::to_string(max) +
                                        " bytes. See "
                                        "https://www.consul.io/docs/agent/"
                                        "options.html#kv_max_value_size.");
        r.close = true;
        return r;
    }
    // io.Copy(buf, req.Body): a body that could not be read is the handler's error (500).
    // One over the limit can only be chunked here (Consul would take it whole).
    if (req.body_error == body_too_large)
        return text_response(413, std::string(body_too_large));
    if (!req.body_error.empty())
        return text_response(500, req.body_error);
    e.value = req.body;
    if (foreign_dc(a, req))
        return no_path_to_dc();

    const apply_outcome out = a.state.kv_apply(op, std::move(e), std::chrono::steady_clock::now());
    if (!out.error.empty())
        return text_response(500, out.error);
    return json_response(json::value(op == kv_op::set ? true : out.result));
}

http_response kv_delete(agent_impl& a, const http_request& req, std::string_view key) {
    if (auto refused = namespace_refused(req))
        return std::move(*refused);
    if (auto c = conflicting(req, {"recurse", "cas"}))
        return std::move(*c);
    kv_entry e;
    e.key = key;
    kv_op op = kv_op::del;
    if (req.query.has("recurse"))
        op = kv_op::delete_tree;
    else if (key.empty())
        return text_response(400, "Missing key name");
    if (req.query.has("cas")) {
        if (auto bad = query_uint(req, "cas", e.modify_index))
            return std::move(*bad);
        op = kv_op::delete_cas;
    }
    if (foreign_dc(a, req))
        return no_path_to_dc();
    const apply_outcome out = a.state.kv_apply(op, std::move(e), std::chrono::steady_clock::now());
    if (!out.error.empty())
        return text_response(500, out.error);
    return json_response(json::value(op == kv_op::delete_cas ? out.result : true));
}

} // namespace

asio::awaitable<http_response> kv_endpoint_wait(agent_impl& a, const http_request& req,
                                                disconnect_probe* probe) {
    // kv_endpoint_now answered bad options, writes and plain reads.
    const query_opts opts = parse_query_opts(req.query).opts;
    const std::string_view key = path_rest(req, kv_prefix);
    if (req.query.has("keys"))
        co_return co_await kv_get_keys(a, req, opts, key, probe);
    co_return co_await kv_get(a, req, opts, key, probe);
}

std::optional<http_response> kv_endpoint_now(agent_impl& a, const http_request& req) {
    const query_opts_parse qp = parse_query_opts(req.query);
    if (!qp.error.empty())
        return text_response(400, qp.error);
    const std::string_view key = path_rest(req, kv_prefix);
    if (req.method == "GET") {
        if (req.query.has("keys") || qp.opts.min_index != 0)
            return std::nullopt;
        return kv_get_now(a, req, key);
    }
    if (req.method == "PUT")
        return kv_put(a, req, key);
    return kv_delete(a, req, key);
}

} // namespace conclave::dev::detail
