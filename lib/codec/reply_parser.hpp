// Consul's hot replies (KV entry lists, /v1/txn results) parsed straight into the typed
// structs with a SAX handler, without building a json::value first (after a hand-written
// scanner for the usual shapes, reply_scan.hpp, declined).
//
// Why: a lock cycle is two /v1/txn round trips, and building the DOM of each answer (object
// tables, key lookups, string copies out of it) cost more client CPU than the rest of the
// reply handling. The accepted and refused inputs are exactly those of the DOM code in
// codec/json.cpp (kv_entry_from_json, json_u64): see reply_parser.cpp for the rules.
#pragma once

#include <conclave/types.hpp>

#include <cstddef>
#include <string_view>
#include <vector>

namespace conclave::codec {

/// Parses a JSON array of KVPairs (GET /v1/kv/<key>, ?recurse) and appends them to `out`.
/// False on bad JSON, a non-array, or an element kv_entry_from_json would refuse.
/// The scanner of reply_scan.hpp reads the usual answers; the SAX parser the others.
bool parse_kv_entries(std::string_view body, std::vector<kv_entry>& out);

/// Parses a /v1/txn answer: the "KV" entries of "Results" go to `out.results`, "Errors" to
/// `out.errors` (other fields of `out` are left alone). False on bad JSON, a non-object,
/// a "KV" entry kv_entry_from_json would refuse, or a non-object element of "Errors".
bool parse_txn_reply(std::string_view body, txn_result& out);

/// The SAX parser alone (tests compare it with the scanner and the DOM code). `piece` > 0
/// feeds the parser that many bytes at a time (strings that cross write boundaries); 0
/// parses the body in one write. On false, `out` may hold part of the body.
bool sax_kv_entries(std::string_view body, std::vector<kv_entry>& out, std::size_t piece = 0);
bool sax_txn_reply(std::string_view body, txn_result& out, std::size_t piece = 0);

} // namespace conclave::codec
