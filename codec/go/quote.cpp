// SPDX-License-Identifier: BSL-1.0
#include "codec/go/quote.hpp"
#include "codec/go/utf8.hpp"

namespace conclave::codec::go {

namespace {

constexpr const char* lower_hex = "0123456789abcdef";

void append_escaped_rune(std::string& out, char32_t r) {
    switch (r) {
    case '\a':
        out += "\\a";
        return;
    case '\b':
        out += "\\b";
        return;
    case '\f':
        out += "\\f";
        return;
    case '\n':
        out += "\\n";
        return;
    case '\r':
        out += "\\r";
        return;
    case '\t':
        out += "\\t";
        return;
    case '\v':
        out += "\\v";
        return;
    default:
        break;
    }
    if (r < ' ' || r == 0x7F) { // Go's appendEscapedRune: DEL as \x7f
        out += "\\x";
        out += lower_hex[(r >> 4) & 0xF];
        out += lower_hex[r & 0xF];
    } else if (r < 0x10000) {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4)
            out += lower_hex[(r >> shift) & 0xF];
    } else {
        out += "\\U";
        for (int shift = 28; shift >= 0; shift -= 4)
            out += lower_hex[(r >> shift) & 0xF];
    }
}

} // namespace

bool is_print(char32_t r) {
    if (r < 0x20 || (r >= 0x7F && r <= 0xA0) || r == 0xAD)
        return false;
    if (r < 0x100)
        return true;
    if ((r >= 0x2000 && r <= 0x200F) || (r >= 0x2028 && r <= 0x202F) ||
        (r >= 0x205F && r <= 0x206F) || r == 0x1680 || r == 0x3000 || r == 0xFEFF ||
        (r >= 0xFFF9 && r <= 0xFFFB) || (r >= 0xE000 && r <= 0xF8FF) || r >= 0xF0000)
        return false;
    return true;
}

std::string quote(std::string_view s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size();) {
        const rune_at ra = decode_rune(s, i);
        if (ra.invalid) {
            const auto b = static_cast<unsigned char>(s[i]);
            out += "\\x";
            out += lower_hex[b >> 4];
            out += lower_hex[b & 0xF];
        } else if (ra.r == '"' || ra.r == '\\') {
            out += '\\';
            out += char(ra.r);
        } else if (is_print(ra.r)) {
            out.append(s.substr(i, ra.width));
        } else {
            append_escaped_rune(out, ra.r);
        }
        i += ra.width;
    }
    out += '"';
    return out;
}

} // namespace conclave::codec::go
