// SPDX-License-Identifier: BSL-1.0
#include "codec/go/json_text.hpp"
#include "codec/go/quote.hpp"
#include "codec/go/utf8.hpp"

#include <array>

namespace conclave::codec::go {

namespace {

// The bytes json.Marshal writes as they are (its HTML-safe escaping takes <, >, &), as a
// table: every byte of every string of an answer is looked up.
constexpr std::array<bool, 256> plain_bytes = [] {
    std::array<bool, 256> t{};
    for (unsigned b = 0x20; b < 0x80; ++b)
        t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&';
    return t;
}();

bool plain(unsigned char b) {
    return plain_bytes[b];
}

} // namespace

// Go's encodeState.string with HTML escaping on (json.Marshal's default).
void append_json_string(std::string& out, std::string_view s) {
    static constexpr const char* hex = "0123456789abcdef";
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        // Runs of bytes written as they are go in at once (answers are mostly such text).
        std::size_t end = i;
        while (end < s.size() && plain(static_cast<unsigned char>(s[end])))
            ++end;
        out.append(s.data() + i, end - i);
        if ((i = end) == s.size())
            break;
        const auto b = static_cast<unsigned char>(s[i]);
        if (b >= 0x80) {
            const std::size_t w = utf8_width(s, i);
            if (w == 0) {
                out += "\\ufffd";
                ++i;
            } else if (w == 3 && b == 0xE2 && s[i + 1] == '\x80' &&
                       (s[i + 2] == '\xA8' || s[i + 2] == '\xA9')) {
                out += s[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
                i += 3;
            } else {
                out.append(s, i, w);
                i += w;
            }
            continue;
        }
        ++i;
        if (b == '"' || b == '\\') {
            out += '\\';
            out += char(b);
        } else if (b == '\n') {
            out += "\\n";
        } else if (b == '\r') {
            out += "\\r";
        } else if (b == '\t') {
            out += "\\t";
        } else {
            out += "\\u00";
            out += hex[b >> 4];
            out += hex[b & 0xF];
        }
    }
    out += '"';
}

std::string json_string(std::string_view s) {
    std::string out;
    append_json_string(out, s);
    return out;
}

std::string json_quote_char(unsigned char c) {
    if (c == '\'')
        return "'\\''";
    if (c == '"')
        return "'\"'";
    std::string utf8;
    append_utf8(utf8, char32_t(c));
    const std::string q = quote(utf8);
    return "'" + q.substr(1, q.size() - 2) + "'";
}

} // namespace conclave::codec::go
