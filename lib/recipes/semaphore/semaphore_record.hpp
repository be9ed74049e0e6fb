// SPDX-License-Identifier: BSL-1.0
// The semaphore's coordination record, `<prefix>/.lock`, as Consul's Go api.Semaphore
// writes it: {"Limit":N,"Holders":{"<session>":true,...}}. Pure data, no I/O.
#pragma once

#include <conclave/consul/kv.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::detail {

struct semaphore_record {
    std::int64_t limit = 0;
    std::set<std::string> holders; ///< sorted, as Go's json.Marshal sorts map keys

    /// Compact JSON with Go's key order; "Holders" is always an object, never null (a Go
    /// peer would panic inserting into a nil map).
    std::string encode() const;

    /// Parses Go's JSON (keys matched case-insensitively, as encoding/json does). An empty
    /// value is a fresh record with `default_limit`. Empty optional when malformed.
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

/// Fair mode: the sessions of the waiting contenders that come first, at most `slots`, in
/// the order of their contender keys' CreateIndex (their arrival). A waiting contender is a
/// direct child `<prefix>/<session>` held by that session (a live contender, ours or a Go
/// peer's), whose session is not among `record`'s holders.
std::vector<std::string> first_in_line(std::string_view prefix,
                                       const std::vector<kv_entry>& entries,
                                       const semaphore_record& record, std::size_t slots);

} // namespace conclave::detail
