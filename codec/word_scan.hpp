// SPDX-License-Identifier: BSL-1.0
// Tests on 8 bytes at once, for scanners of mostly plain text that look for the few bytes
// needing attention (JSON strings to escape, or to copy as they are). Each test is exact
// for the word as a whole ("one of the bytes is ..."), not for which byte.
#pragma once

#include <cstdint>
#include <cstring>

namespace conclave::codec::word {

inline constexpr std::uint64_t ones = 0x0101010101010101ULL;
inline constexpr std::uint64_t highs = 0x8080808080808080ULL;

/// The 8 bytes at `p`, in memory order.
inline std::uint64_t load(const char* p) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
}

/// Non-zero when a byte of `w` is below `n` (exact for n <= 128; bytes 0x80 and above
/// never count).
constexpr std::uint64_t has_less(std::uint64_t w, unsigned n) {
    return (w - ones * n) & ~w & highs;
}

/// Non-zero when a byte of `w` equals `c`.
constexpr std::uint64_t has_byte(std::uint64_t w, unsigned char c) {
    return has_less(w ^ (ones * c), 1);
}

/// Non-zero when a byte of `w` is 0x80 or above.
constexpr std::uint64_t has_high(std::uint64_t w) {
    return w & highs;
}

} // namespace conclave::codec::word
