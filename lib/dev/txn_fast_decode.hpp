// Decoding a /v1/txn body into operations, two ways. decode_ops (routes_txn.cpp) is the
// general path: it reads gojson::decode_first's tree the way Go's json.Decoder fills
// api.TxnOps, with Go's error texts. txn_fast_decode reads the canonical shape that clients
// send straight from the text, and declines everything else (see txn_fast_decode.cpp).
#pragma once

#include "dev/gojson.hpp"
#include "dev/state.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::dev::detail {

/// One element of api.TxnOps.
struct decoded_op {
    bool present = false; ///< KV, Node, Service or Check was set
    txn_op_in op;
    std::string verb_of_other;
};

/// json.Decoder.Decode of the parsed body into api.TxnOps ([]*api.TxnOp): one element per
/// array item (has_nil set when one was null). Takes the strings over from `root`. Returns
/// the decode error text, empty when none.
std::string decode_ops(gojson::value& root, std::vector<decoded_op>& out, bool& has_nil);

/// The operations of a body of the shape `[{"KV":{"Verb":..,"Key":..,"Value":..,"Flags":..,
/// "Index":..,"Session":..}}, ...]` (fields optional, in any order): exactly what
/// decode_first + decode_ops give for it, without an error. nullopt for anything else (then
/// the general path decides, and words the error).
std::optional<std::vector<decoded_op>> txn_fast_decode(std::string_view body);

/// The first thing txn_fast_decode tries: the compact text clients write (no whitespace,
/// printable ASCII strings, `"KV"` first in each element), read byte by byte. Takes a
/// subset of what txn_fast_decode takes, the same way; nullopt for anything else.
std::optional<std::vector<decoded_op>> txn_compact_decode(std::string_view body);
/// The same operations as the store takes them (each one present, a KV operation): what
/// /v1/txn tries first.
std::optional<std::vector<txn_op_in>> txn_compact_ops(std::string_view body);

} // namespace conclave::dev::detail
