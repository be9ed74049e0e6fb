// SPDX-License-Identifier: BSL-1.0
// The read-write lock's rules, without I/O: who holds it, given its contenders in the order
// Consul created their keys.
//
// Every acquire writes a contender key under `<key>/.rwlock/`, held by its session, whose
// flags say read or write. Contenders are served in CreateIndex order, readers together:
// - a reader holds once every live contender before it is a reader;
// - a writer holds once it is the first live contender.
// Every waits-for edge points to an older contender, so no set of contenders can wait for
// each other in a circle; a writer waits only for the contenders before it, so readers that
// come after it cannot starve it. A contender whose session is gone (its key released, not
// deleted) is dead: skipped, and pruned.
//
// An upgrade (a reader becomes the writer) is allowed only for the sole reader that holds,
// and is a transaction that checks that no contender was added since the state it was judged
// on (every acquire rewrites `<key>/.rwlock` in its own transaction, so its ModifyIndex says
// so): a reader that came meanwhile could have judged itself holding.
#pragma once

#include <conclave/consul/kv.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace conclave::detail {

/// The flags of a read-write lock's keys ("rwlockRD", "rwlockWR" and "rwlockSQ" in ASCII): a
/// plain lock's, a semaphore's or a foreign key's flags under `<key>/.rwlock` are a conflict.
inline constexpr std::uint64_t rw_read_flags = 0x72776c6f636b5244ULL;
inline constexpr std::uint64_t rw_write_flags = 0x72776c6f636b5752ULL;
inline constexpr std::uint64_t rw_sequence_flags = 0x72776c6f636b5351ULL;

enum class rw_mode { read, write };

/// One contender key as last read.
struct rw_contender {
    rw_contender(std::string k, std::string s, rw_mode m, std::uint64_t created,
                 std::uint64_t modified)
        : key(std::move(k))
        , session(std::move(s))
        , mode(m)
        , create_index(created)
        , modify_index(modified) {}

    std::string key;
    std::string session; ///< empty: its session is gone (dead)
    rw_mode mode;
    std::uint64_t create_index;
    std::uint64_t modify_index;

    bool live() const noexcept { return !session.empty(); }
};

/// Whether contender `i` of `cs` (sorted by create_index) holds the lock.
inline bool rw_holds(const std::vector<rw_contender>& cs, std::size_t i) {
    if (i >= cs.size() || !cs[i].live())
        return false;
    for (std::size_t j = 0; j < i; ++j) {
        if (!cs[j].live())
            continue;
        if (cs[i].mode == rw_mode::write || cs[j].mode == rw_mode::write)
            return false;
    }
    return true;
}

/// Whether reader `i` may become the writer now: it holds, and no other live reader does.
inline bool rw_may_upgrade(const std::vector<rw_contender>& cs, std::size_t i) {
    if (!rw_holds(cs, i) || cs[i].mode != rw_mode::read)
        return false;
    for (std::size_t j = 0; j < cs.size(); ++j)
        if (j != i && cs[j].mode == rw_mode::read && rw_holds(cs, j))
            return false;
    return true;
}

/// The position of `key` in `cs`, if listed.
inline std::optional<std::size_t> rw_find(const std::vector<rw_contender>& cs,
                                          const std::string& key) {
    for (std::size_t i = 0; i < cs.size(); ++i)
        if (cs[i].key == key)
            return i;
    return std::nullopt;
}

/// What a read of the key's prefix says (rw_hub's shared query): the contenders, oldest
/// (smallest CreateIndex) first, the sequence key's ModifyIndex (0: absent), and why the key
/// is not a read-write lock's (empty: it is, or is free).
struct rw_prefix_reading {
    std::vector<rw_contender> contenders;
    std::uint64_t sequence_index = 0;
    std::string conflict;
};

/// Judges `entries`, the keys under `key` as listed (consumed). Here rather than inside
/// rw_hub's read coroutine so that unit tests reach it without a server. Conflicts: a plain
/// lock on `<key>`, a semaphore or `consul lock` on `<key>/.lock`, other flags on the
/// sequence key or on a key under `<key>/.rwlock/` (which is then no contender). Keys that
/// merely start with the same characters are ignored.
inline rw_prefix_reading read_rw_prefix(const std::string& key, std::vector<kv_entry> entries) {
    rw_prefix_reading r;
    const std::string sequence_key = key + "/.rwlock";
    const std::string prefix = sequence_key + "/";
    for (auto& e : entries) {
        if (e.key == key && e.flags == lock_flag_value)
            r.conflict = "a lock uses \"" + key + "\"";
        else if (e.key == key + "/.lock" &&
                 (e.flags == lock_flag_value || e.flags == semaphore_flag_value))
            r.conflict = "a semaphore or consul lock uses \"" + e.key + "\"";
        else if (e.key == sequence_key) {
            if (e.flags != rw_sequence_flags)
                r.conflict = "\"" + e.key + "\" has other flags";
            r.sequence_index = e.modify_index;
        } else if (e.key.compare(0, prefix.size(), prefix) == 0) {
            if (e.flags != rw_read_flags && e.flags != rw_write_flags) {
                r.conflict = "\"" + e.key + "\" has other flags";
                continue;
            }
            r.contenders.emplace_back(std::move(e.key), std::move(e.session),
                                      e.flags == rw_write_flags ? rw_mode::write : rw_mode::read,
                                      e.create_index, e.modify_index);
        }
    }
    std::sort(r.contenders.begin(), r.contenders.end(),
              [](const rw_contender& a, const rw_contender& b) {
                  return a.create_index < b.create_index;
              });
    return r;
}

} // namespace conclave::detail
