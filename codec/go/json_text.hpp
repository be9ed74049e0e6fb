// SPDX-License-Identifier: BSL-1.0
// JSON text as Go's encoding/json writes it: strings escaped the HTML-safe way json.Marshal
// does by default, and bytes named in its syntax errors. Boost.JSON's serializer escapes
// otherwise (<, >, &, U+2028 and U+2029 as they are, invalid UTF-8 passed through, \b and
// \f short), so this is written by hand.
#pragma once

#include <string>
#include <string_view>

namespace conclave::codec::go {

/// Appends `s` as a JSON string the way json.Marshal writes it: `"`, `\`, control bytes,
/// `<`, `>`, `&`, U+2028 and U+2029 escaped (\n, \r, \t short, the rest \u00XX); each byte
/// of invalid UTF-8 becomes \ufffd.
void append_json_string(std::string& out, std::string_view s);

/// The quoted JSON string alone.
std::string json_string(std::string_view s);

/// encoding/json's quoteChar: the byte as its syntax errors name it, e.g. 'x', '\n', '"'.
std::string json_quote_char(unsigned char c);

} // namespace conclave::codec::go
