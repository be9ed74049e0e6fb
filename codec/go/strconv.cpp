// SPDX-License-Identifier: BSL-1.0
#include "codec/go/quote.hpp"
#include "codec/go/strconv.hpp"

namespace conclave::codec::go {

namespace {

char lower(char c) {
    return char(c | 0x20);
}

std::string num_error_text(std::string_view fn, std::string_view s, num_error e) {
    return "strconv." + std::string(fn) + ": parsing " + quote(s) +
           (e == num_error::syntax ? ": invalid syntax" : ": value out of range");
}

// strconv's underscoreOK: underscores only between digits (or after a base prefix).
bool underscores_ok(std::string_view s) {
    char saw = '^'; // '^' start, '0' digit or prefix, '_' underscore, '!' anything else
    std::size_t i = 0;
    if (!s.empty() && (s[0] == '-' || s[0] == '+'))
        s.remove_prefix(1);
    bool hex = false;
    if (s.size() >= 2 && s[0] == '0' &&
        (lower(s[1]) == 'b' || lower(s[1]) == 'o' || lower(s[1]) == 'x')) {
        i = 2;
        saw = '0';
        hex = lower(s[1]) == 'x';
    }
    for (; i < s.size(); ++i) {
        if ((s[i] >= '0' && s[i] <= '9') || (hex && lower(s[i]) >= 'a' && lower(s[i]) <= 'f')) {
            saw = '0';
            continue;
        }
        if (s[i] == '_') {
            if (saw != '0')
                return false;
            saw = '_';
            continue;
        }
        if (saw == '_')
            return false;
        saw = '!';
    }
    return saw != '_';
}

// ParseUint's steps; the failure, if any, without its text.
num_error parse_digits(std::string_view s, int base, int bits, std::uint64_t& out) {
    if (s.empty())
        return num_error::syntax;
    const bool base0 = base == 0;
    const std::string_view s0 = s;
    if (base0) {
        base = 10;
        if (s[0] == '0') {
            if (s.size() >= 3 && (lower(s[1]) == 'b' || lower(s[1]) == 'o' || lower(s[1]) == 'x')) {
                base = lower(s[1]) == 'b' ? 2 : lower(s[1]) == 'o' ? 8 : 16;
                s.remove_prefix(2);
            } else {
                base = 8;
                s.remove_prefix(1);
            }
        }
    }
    if (bits <= 0 || bits > 64)
        bits = 64;
    const std::uint64_t max_val = bits == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits) - 1;
    const std::uint64_t cutoff = ~std::uint64_t(0) / std::uint64_t(base) + 1;
    bool underscores = false;
    std::uint64_t n = 0;
    for (const char c : s) {
        unsigned d;
        if (c == '_' && base0) {
            underscores = true;
            continue;
        } else if (c >= '0' && c <= '9') {
            d = unsigned(c - '0');
        } else if (lower(c) >= 'a' && lower(c) <= 'z') {
            d = unsigned(lower(c) - 'a' + 10);
        } else {
            return num_error::syntax;
        }
        if (d >= unsigned(base))
            return num_error::syntax;
        if (n >= cutoff) { // n * base overflows
            out = max_val;
            return num_error::range;
        }
        n *= std::uint64_t(base);
        const std::uint64_t n1 = n + d;
        if (n1 < n || n1 > max_val) {
            out = max_val;
            return num_error::range;
        }
        n = n1;
    }
    if (underscores && !underscores_ok(s0))
        return num_error::syntax;
    out = n;
    return num_error::none;
}

} // namespace

parsed_uint parse_uint(std::string_view s, int base, int bits) {
    std::uint64_t n = 0;
    const num_error e = parse_digits(s, base, bits, n);
    if (e != num_error::none)
        return {std::nullopt, e, num_error_text("ParseUint", s, e)};
    return {n, num_error::none, {}};
}

parsed_int parse_int(std::string_view s, int base, int bits) {
    const std::string_view s0 = s;
    bool negative = false;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        negative = s[0] == '-';
        s.remove_prefix(1);
    }
    if (bits <= 0 || bits > 64)
        bits = 64;
    std::uint64_t u = 0;
    num_error e = s0.empty() ? num_error::syntax : parse_digits(s, base, bits, u);
    if (e == num_error::none || e == num_error::range) {
        const std::uint64_t cutoff = std::uint64_t(1) << (bits - 1);
        if (!negative && u >= cutoff)
            e = num_error::range;
        else if (negative && u > cutoff)
            e = num_error::range;
    }
    if (e != num_error::none)
        return {std::nullopt, e, num_error_text("ParseInt", s0, e)};
    // Modular conversion (C++20): the magnitude 2^63 negated is the most negative int64.
    return {negative ? std::int64_t(std::uint64_t(0) - u) : std::int64_t(u), num_error::none, {}};
}

std::optional<bool> parse_bool(std::string_view s) {
    if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True")
        return true;
    if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False")
        return false;
    return std::nullopt;
}

} // namespace conclave::codec::go
