// SPDX-License-Identifier: BSL-1.0
// The counter's rules, without I/O: what a key's text means as a counter, whether a key is
// another recipe's, and additions that refuse to overflow.
//
// A counter is a 64-bit signed integer stored as decimal text in one key (what `consul kv
// get` shows), with flags 0 and no session, as `consul kv put KEY 42` writes it. A missing
// key and an empty value read as 0.
#pragma once

#include "recipes/common/recipe_flags.hpp"

#include <conclave/consul/kv.hpp>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace conclave::detail {

/// The number `text` holds: optional ASCII blanks (space, tab, CR, LF) around an optional
/// sign and at least one decimal digit, within int64. Empty text is 0 (Consul reports an
/// empty value as null: `consul kv put KEY` with no value). Anything else (hex, a fraction,
/// "1e3", a number out of range): none.
inline std::optional<std::int64_t> parse_counter(std::string_view text) {
    constexpr std::string_view blanks = " \t\r\n";
    const auto first = text.find_first_not_of(blanks);
    if (first == std::string_view::npos)
        return text.empty() ? std::optional<std::int64_t>{0} : std::nullopt;
    text = text.substr(first, text.find_last_not_of(blanks) - first + 1);
    if (text.front() == '+') {
        text.remove_prefix(1); // from_chars takes a '-' only
        if (text.empty() || text.front() == '-')
            return std::nullopt;
    }
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

/// How the counter writes `v`: plain decimal, as std::to_string.
inline std::string format_counter(std::int64_t v) {
    return std::to_string(v);
}

/// `value + delta`, or none when it does not fit in int64 (a counter never wraps).
inline std::optional<std::int64_t> checked_add(std::int64_t value, std::int64_t delta) {
    std::int64_t sum = 0;
    if (__builtin_add_overflow(value, delta, &sum))
        return std::nullopt;
    return sum;
}

/// Why `e` is not a counter's key, for errc::conflict's message (empty: it may be one).
/// Another recipe's flags (a lock's, a semaphore's, a read-write lock's), any flags but 0,
/// or a session holding the key: writing a number there would break what uses it.
inline std::string foreign_use(const kv_entry& e) {
    return foreign_key(e, 0, "a counter");
}

/// What a counter's key says: its number, or why it is not a counter (for the message of
/// errc::conflict, naming the key and quoting at most 64 bytes of its text).
struct counter_judgement {
    std::optional<std::int64_t> value; ///< the number, when it is a counter
    std::string problem;               ///< else why not
};

inline counter_judgement judge_counter(const std::string& key, const std::optional<kv_entry>& e) {
    counter_judgement j;
    if (!e) {
        j.value = 0;
        return j;
    }
    if (auto why = foreign_use(*e); !why.empty()) {
        j.problem = "key " + key + " is not a counter: " + why;
        return j;
    }
    j.value = parse_counter(e->value);
    if (!j.value) {
        j.problem = "key " + key + " is not a counter: its value " + quoted_value(e->value) +
                    " is not a decimal 64-bit integer";
    }
    return j;
}

} // namespace conclave::detail
