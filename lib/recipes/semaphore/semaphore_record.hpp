// SPDX-License-Identifier: BSL-1.0
// The semaphore's coordination record, `<prefix>/.lock`, as Consul's Go api.Semaphore
// writes it: {"Limit":N,"Holders":{"<session>":true,...}}, with conclave's weighted holders
// (a number of slots in place of `true`). Pure data, no I/O.
#pragma once

#include <conclave/consul/kv.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::detail {

struct semaphore_record {
    std::int64_t limit = 0;
    /// Each holder's session and how many slots it holds (1 for Go's `true`). Sorted, as
    /// Go's json.Marshal sorts map keys.
    std::map<std::string, std::uint32_t> holders;

    /// The slots the holders take together.
    std::uint64_t used() const;
    /// `limit` minus used(), never below 0 (a record written by hand may list more).
    std::uint64_t free() const;
    /// `limit` as a count of slots (0 when the record says a negative one).
    std::uint32_t limit_slots() const;

    /// Compact JSON with Go's key order; "Holders" is always an object, never null (a Go
    /// peer would panic inserting into a nil map). A holder of one slot is `true`, as Go
    /// writes it; a holder of n > 1 slots is the number n, which a Go peer cannot decode:
    /// it fails its acquire ("Failed to read lock") rather than count n slots as one.
    std::string encode() const;

    /// Parses Go's JSON (keys matched case-insensitively, as encoding/json does): a holder
    /// whose value is a bool holds one slot (Go counts every key), a positive integer that
    /// many. An empty value is a fresh record with `default_limit`. Empty optional when
    /// malformed (a holder's value of another kind, 0 or above 2^32 - 1 included).
    static std::optional<semaphore_record> decode(std::string_view json,
                                                  std::int64_t default_limit);

    /// Drops holders whose session holds no key under the prefix (Go: pruneDeadHolders).
    /// Returns how many were dropped.
    std::size_t prune(const std::vector<kv_entry>& entries_under_prefix);
};

/// `<prefix>/<name>` with Go's path.Join rules for the slashes between them.
std::string join_key(std::string_view prefix, std::string_view name);

/// Most dead contender keys one transaction deletes (Consul takes at most 64 operations in
/// one transaction; the acquire's own are few).
inline constexpr std::size_t max_swept_per_txn = 32;

/// A contender key whose session is gone for good, to delete at its ModifyIndex.
struct dead_contender {
    std::string key;
    std::uint64_t modify_index = 0;
};

/// The contender keys among `entries` (the keys under `prefix`) that no session holds: a
/// direct child `<prefix>/<session id>` (a session ID's form, 8-4-4-4-12 hex digits), with
/// the semaphore flags, no Session and a ModifyIndex. Its session released it when it ended
/// (Consul never reuses a session ID), so no holder can be alive with it; Go's
/// pruneDeadHolders already counts it as dead. Never `.lock`, a key with other flags, a
/// nested key or one a session holds. At most `max` of them, in the order of `entries`.
std::vector<dead_contender> dead_contenders(std::string_view prefix,
                                            const std::vector<kv_entry>& entries_under_prefix,
                                            std::size_t max = max_swept_per_txn);

/// How many slots a waiting contender asks for, by session: 1 for those it does not know
/// (another process's contenders: Go's layout has no place to say it).
using weight_of = std::function<std::uint32_t(const std::string& session)>;

/// Fair mode: the sessions of the waiting contenders that come first and fit in `slots`,
/// in the order of their contender keys' CreateIndex (their arrival). The line stops at
/// the first one that does not fit: those behind it wait too, so a contender asking for
/// many slots is not overtaken by smaller ones. A waiting contender is a direct child
/// `<prefix>/<session>` held by that session (a live contender, ours or a Go peer's), whose
/// session is not among `record`'s holders. `weight`, when given, says how many slots each
/// asks for (else one each).
std::vector<std::string> first_in_line(std::string_view prefix,
                                       const std::vector<kv_entry>& entries,
                                       const semaphore_record& record, std::size_t slots,
                                       const weight_of& weight = {});

} // namespace conclave::detail
