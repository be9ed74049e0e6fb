// SPDX-License-Identifier: BSL-1.0
#include "codec/go/duration.hpp"

#include <cstdint>

namespace conclave::codec::go {

namespace {

using std::chrono::nanoseconds;

// Go's time.quote: control and non-ASCII bytes as \xNN, '"' and '\\' escaped.
std::string quoted(std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x80 || c < ' ') {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xF];
        } else {
            if (c == '"' || c == '\\')
                out += '\\';
            out += ch;
        }
    }
    out += '"';
    return out;
}

// Nanoseconds per unit, or 0 when the unit is unknown.
std::uint64_t unit_scale(std::string_view unit) {
    if (unit == "ns")
        return 1;
    if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs")
        return 1000;
    if (unit == "ms")
        return 1000000;
    if (unit == "s")
        return 1000000000;
    if (unit == "m")
        return 60ULL * 1000000000;
    if (unit == "h")
        return 3600ULL * 1000000000;
    return 0;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

} // namespace

duration_parse parse_duration(std::string_view text) {
    const auto invalid = [&] {
        return duration_parse{std::nullopt, "time: invalid duration " + quoted(text)};
    };
    std::string_view s = text;
    bool negative = false;
    if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
        negative = s.front() == '-';
        s.remove_prefix(1);
    }
    if (s == "0")
        return {nanoseconds{0}, {}};
    if (s.empty())
        return invalid();

    // Accumulate in long double-free integer arithmetic: whole part and a fraction scaled.
    std::uint64_t total = 0;
    // As Go: accumulate magnitudes up to 2^63 (the magnitude of the most negative duration).
    constexpr std::uint64_t max_total = std::uint64_t(1) << 63;
    while (!s.empty()) {
        if (!(is_digit(s.front()) || s.front() == '.'))
            return invalid();
        std::uint64_t whole = 0;
        bool any_digits = false, overflow = false;
        while (!s.empty() && is_digit(s.front())) {
            any_digits = true;
            if (overflow || whole > max_total / 10)
                overflow = true;
            else if ((whole = whole * 10 + std::uint64_t(s.front() - '0')) > max_total)
                overflow = true;
            s.remove_prefix(1);
        }
        std::uint64_t frac = 0, frac_scale = 1;
        if (!s.empty() && s.front() == '.') {
            s.remove_prefix(1);
            while (!s.empty() && is_digit(s.front())) {
                any_digits = true;
                if (frac_scale < 1000000000000000000ULL) {
                    frac = frac * 10 + std::uint64_t(s.front() - '0');
                    frac_scale *= 10;
                }
                s.remove_prefix(1);
            }
        }
        if (!any_digits || overflow) // Go rejects an overflowing number before its unit
            return invalid();
        std::size_t unit_len = 0;
        while (unit_len < s.size() && s[unit_len] != '.' && !is_digit(s[unit_len]))
            ++unit_len;
        if (unit_len == 0)
            return {std::nullopt, "time: missing unit in duration " + quoted(text)};
        const std::string_view unit = s.substr(0, unit_len);
        s.remove_prefix(unit_len);
        const std::uint64_t scale = unit_scale(unit);
        if (scale == 0)
            return {std::nullopt,
                    "time: unknown unit " + quoted(unit) + " in duration " + quoted(text)};
        if (whole > max_total / scale)
            return invalid();
        std::uint64_t v = whole * scale;
        // Fraction: frac / frac_scale * scale, computed without overflow for sane inputs.
        v += static_cast<std::uint64_t>(static_cast<long double>(frac) * scale / frac_scale);
        if (v > max_total - total)
            return invalid();
        total += v;
    }
    if (!negative && total > max_total - 1)
        return invalid();
    // Modular conversion (C++20): 2^63 negated is the most negative duration.
    return {nanoseconds{static_cast<std::int64_t>(negative ? std::uint64_t(0) - total : total)},
            {}};
}

namespace {

// Appends v / 10^prec with the fraction's trailing zeros removed ("1.5", "2").
void append_fixed(std::string& out, std::uint64_t v, int prec) {
    std::uint64_t pow = 1;
    for (int i = 0; i < prec; ++i)
        pow *= 10;
    out += std::to_string(v / pow);
    std::uint64_t frac = v % pow;
    if (frac == 0)
        return;
    std::string digits = std::to_string(frac);
    digits.insert(0, std::size_t(prec) - digits.size(), '0');
    while (!digits.empty() && digits.back() == '0')
        digits.pop_back();
    out += '.';
    out += digits;
}

} // namespace

std::string format_duration(std::chrono::nanoseconds d) {
    const std::int64_t n = d.count();
    if (n == 0)
        return "0s";
    std::string out;
    if (n < 0)
        out += '-';
    const std::uint64_t u = n < 0 ? std::uint64_t(0) - std::uint64_t(n) : std::uint64_t(n);
    if (u < 1000000000ULL) {
        if (u < 1000) {
            out += std::to_string(u) + "ns";
        } else if (u < 1000000) {
            append_fixed(out, u, 3);
            out += "\xC2\xB5s";
        } else {
            append_fixed(out, u, 6);
            out += "ms";
        }
        return out;
    }
    const std::uint64_t total_seconds = u / 1000000000ULL;
    const std::uint64_t hours = total_seconds / 3600;
    const std::uint64_t minutes = (total_seconds / 60) % 60;
    if (hours > 0)
        out += std::to_string(hours) + "h";
    if (hours > 0 || minutes > 0)
        out += std::to_string(minutes) + "m";
    append_fixed(out, (total_seconds % 60) * 1000000000ULL + u % 1000000000ULL, 9);
    out += 's';
    return out;
}

std::string format_wait(std::chrono::nanoseconds d) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    if (ms <= 0 && d.count() > 0)
        ms = 1;
    return std::to_string(ms) + "ms";
}

} // namespace conclave::codec::go
