// SPDX-License-Identifier: BSL-1.0
#include "codec/go/quote.hpp"
#include "codec/go/utf8.hpp"
#include "devagent/src/go/goutil.hpp"

#include <algorithm>
#include <cstdio>

namespace conclave::dev::detail {

int hex_value(unsigned char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
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
            if (codec::go::is_print(c)) {
                std::string utf8;
                codec::go::append_utf8(utf8, char32_t(c));
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
