// SPDX-License-Identifier: BSL-1.0
#include "codec/go/utf8.hpp"

namespace conclave::codec::go {

rune_at decode_rune(std::string_view s, std::size_t i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80)
        return {b0, 1, false};
    const auto cont = [&](std::size_t k) {
        return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    };
    const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    if (b0 >= 0xC2 && b0 <= 0xDF && cont(1))
        return {char32_t((b0 & 0x1F) << 6 | (at(1) & 0x3F)), 2, false};
    if (b0 >= 0xE0 && b0 <= 0xEF && cont(1) && cont(2)) {
        const char32_t r = (b0 & 0x0F) << 12 | (at(1) & 0x3F) << 6 | (at(2) & 0x3F);
        if (r >= 0x800 && !(r >= 0xD800 && r <= 0xDFFF))
            return {r, 3, false};
    }
    if (b0 >= 0xF0 && b0 <= 0xF4 && cont(1) && cont(2) && cont(3)) {
        const char32_t r =
            (b0 & 0x07) << 18 | (at(1) & 0x3F) << 12 | (at(2) & 0x3F) << 6 | (at(3) & 0x3F);
        if (r >= 0x10000 && r <= 0x10FFFF)
            return {r, 4, false};
    }
    return {0xFFFD, 1, true};
}

std::size_t utf8_width(std::string_view s, std::size_t i) {
    const rune_at r = decode_rune(s, i);
    return r.invalid ? 0 : r.width;
}

void append_utf8(std::string& out, char32_t r) {
    if (r < 0x80) {
        out += char(r);
    } else if (r < 0x800) {
        out += char(0xC0 | (r >> 6));
        out += char(0x80 | (r & 0x3F));
    } else if (r < 0x10000) {
        out += char(0xE0 | (r >> 12));
        out += char(0x80 | ((r >> 6) & 0x3F));
        out += char(0x80 | (r & 0x3F));
    } else {
        out += char(0xF0 | (r >> 18));
        out += char(0x80 | ((r >> 12) & 0x3F));
        out += char(0x80 | ((r >> 6) & 0x3F));
        out += char(0x80 | (r & 0x3F));
    }
}

} // namespace conclave::codec::go
