// SPDX-License-Identifier: BSL-1.0
// go-memdb's UUID index parsing, whose exact errors Consul exposes on the wire, and the
// small text helpers of the dev agent's lookups. (Go's standard library, strconv, base64,
// durations, JSON text, is codec/go/.) Sans-I/O, no Boost.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace conclave::dev::detail {

/// The value of a hexadecimal digit (either case), or -1.
int hex_value(unsigned char c);

struct parsed_uuid {
    std::optional<std::string> bytes; ///< the index key go-memdb derives from the text
    std::string error;                ///< e.g. `UUID must be 36 characters`
};

/// go-memdb's UUIDFieldIndex lookup key (length 36 enforced, hyphens anywhere, hex pairs).
parsed_uuid memdb_uuid(std::string_view s);

/// memdb_uuid's key for the usual text (8-4-4-4-12 hex digits, either case) written to out
/// without allocating: true then. False for any other text, which memdb_uuid decides.
bool canonical_uuid_key(std::string_view s, char (&out)[16]);

/// Lower-case ASCII copy.
std::string ascii_lower(std::string_view s);

} // namespace conclave::dev::detail
