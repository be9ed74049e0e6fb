// SPDX-License-Identifier: BSL-1.0
#include "codec/base64.hpp"

#include <openssl/evp.h>

namespace conclave::codec {

std::string base64_encode(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3), '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(bytes.data()),
                                  static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0)
        return std::nullopt;
    // EVP_DecodeBlock reads '=' anywhere as a zero sextet and trims surrounding whitespace;
    // accept only the alphabet, with at most two '=' as the final padding.
    std::size_t pad = 0;
    while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=')
        ++pad;
    for (std::size_t i = 0; i + pad < text.size(); ++i) {
        const char c = text[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/'))
            return std::nullopt;
    }
    std::string out(3 * (text.size() / 4), '\0');
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(text.data()),
                                  static_cast<int>(text.size()));
    if (n < 0)
        return std::nullopt;
    // EVP_DecodeBlock counts the bytes the padding stands for; drop them.
    std::size_t len = static_cast<std::size_t>(n);
    if (!text.empty() && text.back() == '=')
        --len;
    if (text.size() >= 2 && text[text.size() - 2] == '=')
        --len;
    out.resize(len);
    return out;
}

} // namespace conclave::codec
