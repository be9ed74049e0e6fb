// SPDX-License-Identifier: BSL-1.0
// What a key's flags say (which recipe it belongs to) and its text, for the messages of
// errc::conflict.
#pragma once

#include "recipes/rwlock/rw_rules.hpp"

#include <conclave/barrier.hpp>
#include <conclave/consul/kv.hpp>
#include <conclave/latch.hpp>

#include <cstdint>
#include <string>

namespace conclave::detail {

/// "a lock's", "a semaphore's", ... for the flags of a known recipe (Go's and conclave's);
/// empty for any other flags (0 included).
inline std::string recipe_of_flags(std::uint64_t flags) {
    if (flags == lock_flag_value)
        return "a lock's";
    if (flags == semaphore_flag_value)
        return "a semaphore's";
    if (flags == rw_read_flags || flags == rw_write_flags || flags == rw_sequence_flags)
        return "a read-write lock's";
    if (flags == barrier_flag_value)
        return "a barrier's";
    if (flags == double_barrier_flag_value)
        return "a double barrier's";
    if (flags == latch_flag_value)
        return "a countdown latch's";
    return {};
}

/// Why a key with `flags` is not one of a recipe whose flags are `ours` ("it is a lock's key
/// (flags N)", "it has flags N (a latch's are M)"); empty when they are ours.
inline std::string foreign_flags(std::uint64_t flags, std::uint64_t ours, const char* recipe) {
    if (flags == ours)
        return {};
    const auto text = std::to_string(flags);
    if (auto other = recipe_of_flags(flags); !other.empty())
        return "it is " + other + " key (flags " + text + ")";
    return "it has flags " + text + " (" + recipe + "'s are " + std::to_string(ours) + ")";
}

/// `value` for a message, quoted: at most 64 bytes of it, "..." after a longer one.
inline std::string quoted_value(const std::string& value) {
    constexpr std::size_t shown = 64;
    std::string text = "\"" + value.substr(0, shown);
    if (value.size() > shown)
        text += "...";
    return text + "\"";
}

/// Why `e` is not a key of a recipe whose flags are `ours` and that never holds it with a
/// session: other flags, or a session's hold (a lock's); empty when it may be one.
inline std::string foreign_key(const kv_entry& e, std::uint64_t ours, const char* recipe) {
    if (auto why = foreign_flags(e.flags, ours, recipe); !why.empty())
        return why;
    if (!e.session.empty())
        return "session " + e.session + " holds it (a lock's key)";
    return {};
}

} // namespace conclave::detail
