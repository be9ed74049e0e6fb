// SPDX-License-Identifier: BSL-1.0
// Small re-implementations of Go standard-library behaviour whose exact output Consul
// exposes on the wire: strconv quoting and integer parsing errors, go-memdb's UUID index
// parsing. (Go's base64 is codec/base64.hpp.) Sans-I/O, no Boost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace conclave::dev::detail {

/// strconv.Quote: a double-quoted Go string literal (also what fmt's %q and %#v print).
std::string go_quote(std::string_view s);

/// encoding/json's quoteChar: the byte as it appears in a syntax error, e.g. 'x', '\n'.
std::string go_quote_char(unsigned char c);

/// The value of a hexadecimal digit (either case), or -1.
int hex_value(unsigned char c);

struct parsed_uint {
    std::optional<std::uint64_t> value;
    std::string error; ///< strconv's message, e.g. `strconv.ParseUint: parsing "x": invalid syntax`
};

/// strconv.ParseUint(s, 10, bits).
parsed_uint go_parse_uint(std::string_view s, int bits = 64);

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

/// The length of the valid UTF-8 sequence at s[i] (1 to 4), or 0 where Go's
/// utf8.DecodeRuneInString reads U+FFFD from a single byte.
std::size_t utf8_width(std::string_view s, std::size_t i);

/// Appends code point `r` to `out` as UTF-8.
void append_utf8(std::string& out, char32_t r);

} // namespace conclave::dev::detail
