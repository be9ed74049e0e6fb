// SPDX-License-Identifier: BSL-1.0
#include "codec/go/base64.hpp"

#include <array>
#include <openssl/evp.h>

namespace conclave::codec::go {

std::string base64_encode(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3), '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(bytes.data()),
                                  static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

namespace {

constexpr unsigned char invalid = 0xFF;

constexpr std::array<unsigned char, 256> sextets = [] {
    std::array<unsigned char, 256> t{};
    t.fill(invalid);
    constexpr std::string_view alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (std::size_t i = 0; i < alphabet.size(); ++i)
        t[static_cast<unsigned char>(alphabet[i])] = static_cast<unsigned char>(i);
    return t;
}();

bool is_newline(char c) {
    return c == '\n' || c == '\r';
}

} // namespace

// The steps and error offsets of Go's Encoding.decodeQuantum (not strict: the unused bits
// of a final quantum may be non-zero, as Go accepts), four sextets at a time.
std::optional<std::string> base64_decode(std::string_view src, std::size_t* error_offset) {
    const auto fail = [&](std::size_t at) -> std::optional<std::string> {
        if (error_offset)
            *error_offset = at;
        return std::nullopt;
    };
    std::string out;
    out.reserve(src.size() / 4 * 3);
    std::size_t si = 0;
    for (;;) {
        unsigned sextet[4] = {};
        std::size_t j = 0; // sextets read in this quantum
        bool padded = false;
        while (j < 4) {
            if (si == src.size()) {
                if (j == 0)
                    return out;
                return fail(si - j); // a short final quantum
            }
            const char c = src[si++];
            const unsigned char value = sextets[static_cast<unsigned char>(c)];
            if (value != invalid) {
                sextet[j++] = value;
                continue;
            }
            if (is_newline(c))
                continue;
            if (c != '=' || j < 2)
                return fail(si - 1);
            // Padding: "x=" must be followed by one more '=' (newlines aside), and nothing
            // but newlines may follow the padding.
            if (j == 2) {
                while (si < src.size() && is_newline(src[si]))
                    ++si;
                if (si == src.size())
                    return fail(src.size());
                if (src[si] != '=')
                    return fail(si - 1);
                ++si;
            }
            while (si < src.size() && is_newline(src[si]))
                ++si;
            if (si < src.size())
                return fail(si);
            padded = true;
            break;
        }
        const unsigned v = sextet[0] << 18 | sextet[1] << 12 | sextet[2] << 6 | sextet[3];
        out += char(v >> 16 & 0xFF);
        if (j > 2)
            out += char(v >> 8 & 0xFF);
        if (j > 3)
            out += char(v & 0xFF);
        if (padded)
            return out;
    }
}

std::string base64_error(std::size_t offset) {
    return "illegal base64 data at input byte " + std::to_string(offset);
}

} // namespace conclave::codec::go
