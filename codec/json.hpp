// SPDX-License-Identifier: BSL-1.0
// JSON shapes shared by the client and the dev agent: KV pairs, sessions, txn ops.
#pragma once

#include <conclave/consul/session.hpp>
#include <conclave/consul/txn.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <string_view>
#include <vector>

namespace conclave::codec {

namespace json = boost::json;

/// Stack space for parsing one reply into a json::value with a json::monotonic_resource:
/// the values of a usual Consul answer (a few KV entries) fit, so parsing allocates nothing
/// on the heap (beyond it the resource falls back to the heap).
inline constexpr std::size_t parse_scratch_size = 4096;

/// Consul's KVPair object, fields in Consul's order. An empty value is `null`;
/// `with_value == false` also writes `null` (txn results of non-read verbs). Allocates from
/// `sp` (an answer's entries can share one monotonic buffer).
json::object kv_entry_to_json(const kv_entry& e, bool with_value = true, json::storage_ptr sp = {});

/// Parses a KVPair object. False on a missing/mistyped field or bad base64.
bool kv_entry_from_json(const json::value& v, kv_entry& out);

/// Parses a JSON array of KVPairs (GET /v1/kv/<key>, ?recurse) and appends them to `out`.
/// False on bad JSON, a non-array, or an element kv_entry_from_json refuses (`out` may then
/// hold the entries before it).
bool parse_kv_entries(std::string_view body, std::vector<kv_entry>& out);

/// Parses a /v1/txn answer: the "KV" entries of "Results" go to `out.results`, "Errors" to
/// `out.errors` (other fields of `out` are left alone). "Results" and "Errors" are read when
/// they are arrays; a result that is not an object or has no "KV" is skipped, a "KV"
/// kv_entry_from_json refuses fails the answer, and so does an "Errors" element that is not
/// an object (its "OpIndex" is 0 unless an unsigned integer, its "What" empty unless a
/// string).
bool parse_txn_reply(std::string_view body, txn_result& out);

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
