// SPDX-License-Identifier: BSL-1.0
// The countdown latch's rules, without I/O: what its key says, and what try_set_count and
// count_down write.
//
// A latch is one key with flags latch_flag_value and no session, its value the count as
// decimal text. A missing key is a count of 0 (open): a count down to 0 deletes the key,
// so a latch at rest leaves nothing behind.
#pragma once

#include "recipes/common/cas_write.hpp"
#include "recipes/common/recipe_flags.hpp"

#include <conclave/consul/kv.hpp>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

namespace conclave::detail {

/// What a latch's key says: its count, or why it is not a latch (for errc::conflict's
/// message, naming the key and quoting at most 64 bytes of its text).
struct latch_judgement {
    std::optional<std::uint64_t> count;
    std::string problem;
};

inline latch_judgement judge_latch(const std::string& key, const std::optional<kv_entry>& e) {
    latch_judgement j;
    if (!e) {
        j.count = 0;
        return j;
    }
    if (auto why = foreign_key(*e, latch_flag_value, "a countdown latch"); !why.empty()) {
        j.problem = "key " + key + " is not a countdown latch: " + why;
        return j;
    }
    std::uint64_t n = 0;
    const auto* end = e->value.data() + e->value.size();
    const auto [last, ec] = std::from_chars(e->value.data(), end, n);
    if (ec != std::errc{} || last != end || e->value.empty()) {
        j.problem = "key " + key + " is not a countdown latch: its value " +
                    quoted_value(e->value) + " is not a count (a decimal number)";
        return j;
    }
    j.count = n;
    return j;
}

/// try_set_count(n) over a count of `current`: sets it only when the latch is open (0).
inline cas_step set_count_step(std::uint64_t current, std::uint64_t n) {
    if (current != 0)
        return cas_step::finish();
    return cas_step::put(std::to_string(n), latch_flag_value);
}

/// count_down() over a count of `current`: one less, never below 0; the key goes at 0.
inline cas_step count_down_step(std::uint64_t current) {
    if (current == 0)
        return cas_step::finish();
    if (current == 1)
        return cas_step::remove();
    return cas_step::put(std::to_string(current - 1), latch_flag_value);
}

} // namespace conclave::detail
