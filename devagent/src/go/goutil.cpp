// SPDX-License-Identifier: BSL-1.0
#include "devagent/src/go/goutil.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

namespace conclave::dev::detail {

namespace {

constexpr const char* lower_hex = "0123456789abcdef";

// One UTF-8 sequence decoded like Go's utf8.DecodeRuneInString: an invalid sequence yields
// U+FFFD with width 1.
struct rune_at {
    char32_t r;
    std::size_t width;
    bool invalid;
};

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

// An approximation of unicode.IsPrint good enough for error texts: ASCII graphic characters
// and most of the rest of Unicode, minus controls, separators and format characters.
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
    if (r < ' ') {
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

int hex_value(unsigned char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
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

std::string go_quote(std::string_view s) {
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

std::string go_quote_char(unsigned char c) {
    if (c == '\'')
        return "'\\''";
    if (c == '"')
        return "'\"'";
    std::string utf8;
    append_utf8(utf8, char32_t(c));
    const std::string q = go_quote(utf8);
    return "'" + q.substr(1, q.size() - 2) + "'";
}

parsed_uint go_parse_uint(std::string_view s, int bits) {
    const auto syntax = [&] {
        return parsed_uint{std::nullopt,
                           "strconv.ParseUint: parsing " + go_quote(s) + ": invalid syntax"};
    };
    const auto range = [&] {
        return parsed_uint{std::nullopt,
                           "strconv.ParseUint: parsing " + go_quote(s) + ": value out of range"};
    };
    if (s.empty())
        return syntax();
    const std::uint64_t max_val = bits >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits) - 1;
    const std::uint64_t cutoff = ~std::uint64_t(0) / 10 + 1;
    std::uint64_t n = 0;
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        unsigned d;
        const unsigned char lower = c | 0x20;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (lower >= 'a' && lower <= 'z')
            d = lower - 'a' + 10;
        else
            return syntax();
        if (d >= 10)
            return syntax();
        if (n >= cutoff)
            return range();
        n *= 10;
        const std::uint64_t n1 = n + d;
        if (n1 < n || n1 > max_val)
            return range();
        n = n1;
    }
    return {n, {}};
}

bool canonical_uuid_key(std::string_view s, char (&out)[16]) {
    if (s.size() != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-')
        return false;
    std::size_t n = 0;
    for (std::size_t i = 0; i < 36; i += 2) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            ++i;
        const int high = hex_value(static_cast<unsigned char>(s[i]));
        const int low = hex_value(static_cast<unsigned char>(s[i + 1]));
        if (high < 0 || low < 0)
            return false;
        out[n++] = char(high << 4 | low);
    }
    return true;
}

parsed_uuid memdb_uuid(std::string_view s) {
    const auto fail = [](std::string e) { return parsed_uuid{std::nullopt, std::move(e)}; };
    if (s.size() != 36)
        return fail("UUID must be 36 characters");
    const auto hyphens = std::size_t(std::count(s.begin(), s.end(), '-'));
    if (hyphens > 4)
        return fail("UUID should have maximum of 4 \"-\"; got " + std::to_string(hyphens));
    if ((s.size() - hyphens) % 2 != 0)
        return fail("Input (without hyphens) must be even length");
    // The hex pairs of the text without its hyphens, straight into the key (every lock looks
    // its session up: one allocation); the first bad byte in that order is the one named.
    std::string bytes((s.size() - hyphens) / 2, '\0');
    std::size_t n = 0;
    int high = -1;
    for (const char ch : s) {
        if (ch == '-')
            continue;
        const auto c = static_cast<unsigned char>(ch);
        const int v = hex_value(c);
        if (v < 0) {
            char code[16];
            std::snprintf(code, sizeof code, "U+%04X", unsigned(c));
            std::string what = std::string("Invalid UUID: encoding/hex: invalid byte: ") + code;
            if (is_print(c)) {
                std::string utf8;
                append_utf8(utf8, char32_t(c));
                what += " '" + utf8 + "'";
            }
            return fail(std::move(what));
        }
        if (high < 0) {
            high = v;
        } else {
            bytes[n++] = char(high << 4 | v);
            high = -1;
        }
    }
    return {std::move(bytes), {}};
}

std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    return out;
}

} // namespace conclave::dev::detail
