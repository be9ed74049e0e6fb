// SPDX-License-Identifier: BSL-1.0
#include "codec/go/base64.hpp"
#include "codec/go/duration.hpp"
#include "codec/json.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>

#include <array>

namespace conclave::codec {

json::object kv_entry_to_json(const kv_entry& e, bool with_value, json::storage_ptr sp) {
    json::object o(std::move(sp));
    o.reserve(7);
    o["LockIndex"] = e.lock_index;
    o["Key"] = e.key;
    o["Flags"] = e.flags;
    if (with_value && !e.value.empty())
        o["Value"] = go::base64_encode(e.value);
    else
        o["Value"] = nullptr;
    if (!e.session.empty())
        o["Session"] = e.session;
    o["CreateIndex"] = e.create_index;
    o["ModifyIndex"] = e.modify_index;
    return o;
}

std::optional<std::uint64_t> json_u64(const json::value& v) {
    if (v.is_uint64())
        return v.get_uint64();
    if (v.is_int64() && v.get_int64() >= 0)
        return static_cast<std::uint64_t>(v.get_int64());
    return std::nullopt;
}

namespace {

bool read_u64(const json::object& o, std::string_view name, std::uint64_t& out) {
    auto it = o.find(name);
    if (it == o.end() || it->value().is_null()) {
        out = 0;
        return true;
    }
    auto v = json_u64(it->value());
    if (!v)
        return false;
    out = *v;
    return true;
}

bool read_string(const json::object& o, std::string_view name, std::string& out) {
    auto it = o.find(name);
    if (it == o.end() || it->value().is_null()) {
        out.clear();
        return true;
    }
    if (!it->value().is_string())
        return false;
    out = std::string(it->value().get_string());
    return true;
}

bool read_string_list(const json::object& o, std::string_view name, std::vector<std::string>& out) {
    out.clear();
    auto it = o.find(name);
    if (it == o.end() || it->value().is_null())
        return true;
    if (!it->value().is_array())
        return false;
    for (const auto& item : it->value().get_array()) {
        if (!item.is_string())
            return false;
        out.emplace_back(item.get_string());
    }
    return true;
}

} // namespace

bool kv_entry_from_json(const json::value& v, kv_entry& out) {
    if (!v.is_object())
        return false;
    out.key.clear();
    out.session.clear();
    out.value.clear();
    out.flags = out.lock_index = out.create_index = out.modify_index = 0;
    // One pass over the members (the parsed object kept the last of duplicate keys); a
    // field missing or null keeps its empty value.
    for (const auto& member : v.get_object()) {
        const std::string_view k = member.key();
        const json::value& f = member.value();
        if (f.is_null())
            continue;
        if (k == "Key" || k == "Session" || k == "Value") {
            if (!f.is_string())
                return false;
            const std::string_view text = f.get_string();
            if (k == "Key") {
                out.key = text;
            } else if (k == "Session") {
                out.session = text;
            } else {
                auto decoded = go::base64_decode(text);
                if (!decoded)
                    return false;
                out.value = std::move(*decoded);
            }
            continue;
        }
        std::uint64_t* n = k == "Flags"         ? &out.flags
                           : k == "LockIndex"   ? &out.lock_index
                           : k == "CreateIndex" ? &out.create_index
                           : k == "ModifyIndex" ? &out.modify_index
                                                : nullptr;
        if (!n)
            continue;
        const auto u = json_u64(f);
        if (!u)
            return false;
        *n = *u;
    }
    return true;
}

bool session_entry_from_json(const json::value& v, session_entry& out) {
    if (!v.is_object())
        return false;
    const auto& o = v.get_object();
    std::string behavior;
    if (!read_string(o, "ID", out.id) || !read_string(o, "Name", out.name) ||
        !read_string(o, "Node", out.node) || !read_string(o, "Behavior", behavior) ||
        !read_string(o, "TTL", out.ttl_text) ||
        !read_string_list(o, "NodeChecks", out.node_checks) ||
        !read_u64(o, "CreateIndex", out.create_index) ||
        !read_u64(o, "ModifyIndex", out.modify_index))
        return false;
    out.behavior = behavior == "delete" ? session_behavior::delete_keys : session_behavior::release;
    out.lock_delay = std::chrono::nanoseconds{0};
    if (auto it = o.find("LockDelay"); it != o.end()) {
        if (it->value().is_int64())
            out.lock_delay = std::chrono::nanoseconds{it->value().get_int64()};
        else if (it->value().is_uint64())
            out.lock_delay = std::chrono::nanoseconds{std::int64_t(it->value().get_uint64())};
        else if (!it->value().is_null())
            return false;
    }
    out.ttl = std::chrono::nanoseconds{0};
    if (!out.ttl_text.empty()) {
        auto parsed = go::parse_duration(out.ttl_text);
        if (!parsed.value)
            return false;
        out.ttl = *parsed.value;
    }
    out.service_checks.clear();
    if (auto it = o.find("ServiceChecks"); it != o.end() && it->value().is_array()) {
        for (const auto& item : it->value().get_array()) {
            if (!item.is_object())
                return false;
            service_check c;
            if (!read_string(item.get_object(), "ID", c.id) ||
                !read_string(item.get_object(), "Namespace", c.ns))
                return false;
            out.service_checks.push_back(std::move(c));
        }
    }
    return true;
}

namespace {

// Parses a reply into `scratch` first: a usual answer fits, so parsing allocates nothing.
// The value is constructed from parse's result (a move keeps its storage; an assignment
// would copy it to the target's).
struct reply_dom {
    unsigned char scratch[parse_scratch_size];
    json::monotonic_resource mr{scratch, sizeof scratch};
    json::error_code ec;
    json::value v;

    explicit reply_dom(std::string_view body)
        : v(json::parse(body, ec, &mr)) {}
};

} // namespace

bool parse_kv_entries(std::string_view body, std::vector<kv_entry>& out) {
    const reply_dom dom(body);
    if (dom.ec || !dom.v.is_array())
        return false;
    out.reserve(out.size() + dom.v.get_array().size());
    for (const auto& item : dom.v.get_array())
        if (!kv_entry_from_json(item, out.emplace_back()))
            return false;
    return true;
}

bool parse_txn_reply(std::string_view body, txn_result& out) {
    const reply_dom dom(body);
    if (dom.ec || !dom.v.is_object())
        return false;
    const auto& o = dom.v.get_object();
    if (const auto* results = o.if_contains("Results"); results && results->is_array()) {
        for (const auto& item : results->get_array()) {
            const json::value* kv =
                item.is_object() ? item.get_object().if_contains("KV") : nullptr;
            if (kv && !kv_entry_from_json(*kv, out.results.emplace_back()))
                return false;
        }
    }
    if (const auto* errors = o.if_contains("Errors"); errors && errors->is_array()) {
        for (const auto& item : errors->get_array()) {
            if (!item.is_object())
                return false;
            txn_error& err = out.errors.emplace_back();
            if (const auto* index = item.get_object().if_contains("OpIndex"))
                err.op_index = json_u64(*index).value_or(0);
            if (const auto* what = item.get_object().if_contains("What"); what && what->is_string())
                err.what = std::string(what->get_string());
        }
    }
    return true;
}

namespace {

constexpr std::array<std::pair<kv_verb, std::string_view>, 12> verb_names{{
    {kv_verb::set, "set"},
    {kv_verb::cas, "cas"},
    {kv_verb::lock, "lock"},
    {kv_verb::unlock, "unlock"},
    {kv_verb::get, "get"},
    {kv_verb::get_tree, "get-tree"},
    {kv_verb::check_index, "check-index"},
    {kv_verb::check_session, "check-session"},
    {kv_verb::check_not_exists, "check-not-exists"},
    {kv_verb::delete_key, "delete"},
    {kv_verb::delete_tree, "delete-tree"},
    {kv_verb::delete_cas, "delete-cas"},
}};

} // namespace

std::string_view kv_verb_name(kv_verb v) {
    for (const auto& [verb, name] : verb_names)
        if (verb == v)
            return name;
    return "get";
}

std::optional<kv_verb> kv_verb_from_name(std::string_view name) {
    for (const auto& [verb, n] : verb_names)
        if (n == name)
            return verb;
    return std::nullopt;
}

json::object txn_op_to_json(const txn_op& op) {
    json::object kv;
    kv["Verb"] = kv_verb_name(op.verb);
    kv["Key"] = op.key;
    if (!op.value.empty())
        kv["Value"] = go::base64_encode(op.value);
    if (op.flags != 0)
        kv["Flags"] = op.flags;
    if (op.index != 0)
        kv["Index"] = op.index;
    if (!op.session.empty())
        kv["Session"] = op.session;
    if (!op.namespace_name.empty())
        kv["Namespace"] = op.namespace_name;
    if (!op.partition.empty())
        kv["Partition"] = op.partition;
    json::object o;
    o["KV"] = std::move(kv);
    return o;
}

} // namespace conclave::codec
