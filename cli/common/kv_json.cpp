// SPDX-License-Identifier: BSL-1.0
#include "cli/common/kv_json.hpp"
#include "codec/go/base64.hpp"
#include "codec/go/json_marshal.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace conclave::cli {

namespace {

namespace json = boost::json;

// Go's api.KVPair, its fields in the struct's order (a json::object keeps its members'
// order).
json::object kv_pair(const kv_entry& e) {
    json::object o;
    o["Key"] = e.key;
    o["CreateIndex"] = e.create_index;
    o["ModifyIndex"] = e.modify_index;
    o["LockIndex"] = e.lock_index;
    o["Flags"] = e.flags;
    // Consul stores an empty value as nil, which Go writes as null.
    if (e.value.empty())
        o["Value"] = nullptr;
    else
        o["Value"] = codec::go::base64_encode(e.value);
    o["Session"] = e.session;
    return o;
}

} // namespace

std::string watch_json(const std::vector<kv_entry>& entries, bool single, bool indented) {
    json::value doc; // null: no key, or no pairs (Consul's API reports them as nil)
    if (single && !entries.empty()) {
        doc = kv_pair(entries.front());
    } else if (!single && !entries.empty()) {
        json::array items;
        for (const auto& e : entries)
            items.push_back(kv_pair(e));
        doc = std::move(items);
    }
    if (indented)
        return codec::go::marshal_indent(doc, "    ");
    return codec::go::marshal(doc) + "\n";
}

std::string export_json(const std::vector<kv_entry>& entries) {
    json::array items;
    for (const auto& e : entries)
        items.push_back(json::object{
            {"key", e.key}, {"flags", e.flags}, {"value", codec::go::base64_encode(e.value)}});
    return codec::go::marshal_indent(items, "\t");
}

} // namespace conclave::cli
