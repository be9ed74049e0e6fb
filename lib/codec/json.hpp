// JSON shapes shared by the client and the dev agent: KV pairs, sessions, txn ops.
#pragma once

#include <conclave/types.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <string_view>

namespace conclave::codec {

namespace json = boost::json;

/// Stack space for parsing one reply into a json::value with a json::monotonic_resource:
/// the values of a usual Consul answer (a few KV entries) fit, so parsing allocates nothing
/// on the heap (beyond it the resource falls back to the heap).
inline constexpr std::size_t parse_scratch_size = 4096;

/// Consul's KVPair object, fields in Consul's order. An empty value is `null`;
/// `with_value == false` also writes `null` (txn results of non-read verbs).
json::object kv_entry_to_json(const kv_entry& e, bool with_value = true);

/// Parses a KVPair object. False on a missing/mistyped field or bad base64.
bool kv_entry_from_json(const json::value& v, kv_entry& out);

/// Parses a SessionEntry object.
bool session_entry_from_json(const json::value& v, session_entry& out);

/// Unsigned 64-bit from a JSON number (no detour through double for large values).
std::optional<std::uint64_t> json_u64(const json::value& v);

/// "set", "get-tree", "delete-cas", ... and back.
std::string_view kv_verb_name(kv_verb v);
std::optional<kv_verb> kv_verb_from_name(std::string_view name);

/// {"KV": {"Verb": ..., "Key": ..., "Value": base64|null, "Flags": n, "Index": n, "Session": s}}
json::object txn_op_to_json(const txn_op& op);

} // namespace conclave::codec
