// SPDX-License-Identifier: BSL-1.0
// UTF-8 as Go's unicode/utf8 reads and writes it: what decides where Go's JSON and quoting
// see a character, and where they see a byte of invalid UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace conclave::codec::go {

/// One sequence decoded like utf8.DecodeRuneInString: an invalid sequence (overlong,
/// surrogate, past U+10FFFF, truncated) is U+FFFD of width 1.
struct rune_at {
    char32_t r;
    std::size_t width;
    bool invalid;
};

/// The sequence at s[i] (i < s.size()).
rune_at decode_rune(std::string_view s, std::size_t i);

/// The length of the valid UTF-8 sequence at s[i] (1 to 4), or 0 where Go reads U+FFFD
/// from a single byte.
std::size_t utf8_width(std::string_view s, std::size_t i);

/// Appends code point `r` to `out` as UTF-8.
void append_utf8(std::string& out, char32_t r);

} // namespace conclave::codec::go
