// The fast path of reply_parser: a hand-written scanner for exactly the KV lists and /v1/txn
// answers Consul sends (Go's json.Marshal, or json.MarshalIndent in dev mode), tried before
// the SAX parser.
//
// Why: a txn answer of a lock cycle took ~8.6 k instructions through Boost.JSON's parser and
// the SAX handler, the largest item of a cycle on the client; ~5.3 k with the scanner, the
// entries' allocations included. Both answers of a lock cycle took ~7.9 k with the first
// scanner, ~5.6 k once Go's indentation, the lock flags and the growth of the results
// vector had fast paths.
//
// Either the scanner takes the whole body, and fills `out` exactly as the SAX parser would,
// or it declines ("not handled") and leaves `out` as it was; it never refuses a body itself,
// so the SAX parser keeps the last word on what is accepted. See reply_scan.cpp for what it
// takes.
#pragma once

#include <conclave/types.hpp>

#include <string_view>
#include <vector>

namespace conclave::codec {

/// A JSON array of KVPairs: appends them to `out` and returns true, or returns false (not
/// handled) with `out` unchanged.
bool scan_kv_entries(std::string_view body, std::vector<kv_entry>& out);

/// A /v1/txn answer: appends its "KV" results to `out.results` and its "Errors" to
/// `out.errors` and returns true, or returns false (not handled) with `out` unchanged.
bool scan_txn_reply(std::string_view body, txn_result& out);

} // namespace conclave::codec
