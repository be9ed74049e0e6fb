// SPDX-License-Identifier: BSL-1.0
#include "recipes/semaphore/semaphore_record.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cctype>
#include <set>

namespace conclave::detail {

namespace json = boost::json;

namespace {

const json::value* find_ci(const json::object& o, std::string_view name) {
    if (auto* exact = o.if_contains(name))
        return exact;
    for (const auto& kv : o)
        if (boost::beast::iequals(kv.key(), name))
            return &kv.value();
    return nullptr;
}

// A session ID as Consul makes them (a UUID: 8-4-4-4-12 hex digits).
bool looks_like_session_id(std::string_view s) {
    if (s.size() != 36)
        return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i])))
            return false;
    }
    return true;
}

} // namespace

std::uint64_t semaphore_record::used() const {
    std::uint64_t n = 0;
    for (const auto& [session, slots] : holders)
        n += slots;
    return n;
}

std::uint64_t semaphore_record::free() const {
    const auto n = used();
    return limit > 0 && n < static_cast<std::uint64_t>(limit)
               ? static_cast<std::uint64_t>(limit) - n
               : 0;
}

std::uint32_t semaphore_record::limit_slots() const {
    return limit < 0 ? 0 : static_cast<std::uint32_t>(std::min<std::int64_t>(limit, 0xffffffff));
}

std::string semaphore_record::encode() const {
    // Built by hand to keep Go's field order (Limit, Holders) and sorted holder keys.
    std::string out = "{\"Limit\":" + std::to_string(limit) + ",\"Holders\":{";
    bool first = true;
    for (const auto& [session, slots] : holders) {
        if (!first)
            out += ',';
        first = false;
        out += json::serialize(json::value(session)); // quoted and escaped
        out += slots == 1 ? ":true" : ":" + std::to_string(slots);
    }
    out += "}}";
    return out;
}

std::optional<semaphore_record> semaphore_record::decode(std::string_view text,
                                                         std::int64_t default_limit) {
    semaphore_record r;
    if (text.empty()) {
        r.limit = default_limit;
        return r;
    }
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec || !v.is_object())
        return std::nullopt;
    const auto& o = v.get_object();
    if (const auto* limit = find_ci(o, "Limit")) {
        if (limit->is_int64())
            r.limit = limit->get_int64();
        else if (limit->is_uint64())
            r.limit = static_cast<std::int64_t>(limit->get_uint64());
        else if (!limit->is_null())
            return std::nullopt;
    }
    if (const auto* holders = find_ci(o, "Holders"); holders && !holders->is_null()) {
        if (!holders->is_object())
            return std::nullopt;
        // Go tests membership with `_, ok := Holders[id]`: every key is a holder, `false`
        // included. A number is a weighted holder of ours.
        for (const auto& kv : holders->get_object()) {
            std::uint32_t slots = 1;
            if (!kv.value().is_bool()) {
                const auto n = kv.value().to_number<std::int64_t>(ec);
                if (ec || n < 1 || n > 0xffffffff)
                    return std::nullopt;
                slots = static_cast<std::uint32_t>(n);
            }
            r.holders.emplace(std::string(kv.key()), slots);
        }
    }
    return r;
}

std::size_t semaphore_record::prune(const std::vector<kv_entry>& entries) {
    std::set<std::string_view> alive;
    for (const auto& e : entries)
        if (!e.session.empty())
            alive.insert(e.session);
    std::size_t dropped = 0;
    for (auto it = holders.begin(); it != holders.end();) {
        if (alive.count(it->first) == 0) {
            it = holders.erase(it);
            ++dropped;
        } else {
            ++it;
        }
    }
    return dropped;
}

std::vector<dead_contender> dead_contenders(std::string_view prefix,
                                            const std::vector<kv_entry>& entries, std::size_t max) {
    const std::string children = join_key(prefix, "");
    std::vector<dead_contender> out;
    for (const auto& e : entries) {
        if (out.size() >= max)
            break;
        if (!e.session.empty() || e.flags != semaphore_flag_value || e.modify_index == 0)
            continue;
        const std::string_view key = e.key;
        if (!key.starts_with(children) || !looks_like_session_id(key.substr(children.size())))
            continue; // `.lock`, a nested key, a key named otherwise
        out.push_back({e.key, e.modify_index});
    }
    return out;
}

std::vector<std::string> first_in_line(std::string_view prefix,
                                       const std::vector<kv_entry>& entries,
                                       const semaphore_record& record, std::size_t slots,
                                       const weight_of& weight) {
    const std::string children = join_key(prefix, "");
    std::vector<const kv_entry*> waiting;
    for (const auto& e : entries) {
        const std::string_view key = e.key;
        if (e.session.empty() || e.flags != semaphore_flag_value || !key.starts_with(children))
            continue;
        const auto name = key.substr(children.size());
        if (name == e.session && record.holders.count(e.session) == 0)
            waiting.push_back(&e);
    }
    std::sort(waiting.begin(), waiting.end(), [](const kv_entry* a, const kv_entry* b) {
        return a->create_index < b->create_index;
    });
    std::vector<std::string> out;
    std::size_t taken = 0;
    for (const auto* e : waiting) {
        const std::size_t n = weight ? weight(e->session) : 1;
        if (taken + n > slots)
            break;
        taken += n;
        out.push_back(e->session);
    }
    return out;
}

std::string join_key(std::string_view prefix, std::string_view name) {
    while (!prefix.empty() && prefix.back() == '/')
        prefix.remove_suffix(1);
    while (!name.empty() && name.front() == '/')
        name.remove_prefix(1);
    if (prefix.empty())
        return std::string(name);
    return std::string(prefix) + "/" + std::string(name);
}

} // namespace conclave::detail
