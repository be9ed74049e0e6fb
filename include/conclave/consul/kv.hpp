// SPDX-License-Identifier: BSL-1.0
/// \file
/// The key/value store's values: entries, the results of reads, the options of writes, and
/// the flags Go's lock and semaphore (and conclave's group) write.
#pragma once

#include <conclave/consul/request.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace conclave {

/// Flags of a key written by Consul's Go api.Lock (and `consul lock`).
inline constexpr std::uint64_t lock_flag_value = 3304740253564472344ULL;
/// Flags of the `.lock` and contender keys written by Go's api.Semaphore.
inline constexpr std::uint64_t semaphore_flag_value = 16210313421097356768ULL;
/// Flags of a group member's key `<prefix>/<member id>` (conclave::group; no Go
/// counterpart: a random number, so that no other tool's keys carry it by chance).
inline constexpr std::uint64_t group_member_flag_value = 0xffe1de6796cfcacfULL;

/// One KV pair as Consul stores it. An empty value is what Consul reports as `null`.
struct kv_entry {
    std::string key;                ///< the key
    std::string value;              ///< the stored bytes
    std::uint64_t flags = 0;        ///< stored with the value; Consul gives them no meaning
    std::uint64_t lock_index = 0;   ///< how many times the key was acquired (LockIndex)
    std::string session;            ///< holder's session ID, empty when unlocked
    std::uint64_t create_index = 0; ///< Raft index of the write that created the key
    std::uint64_t modify_index = 0; ///< Raft index of the key's last write

    bool operator==(const kv_entry&) const = default;
};

/// What client::async_kv_get completes with.
struct kv_get_result {
    std::optional<kv_entry> entry; ///< empty when the key does not exist (HTTP 404)
    query_meta meta;               ///< the read's index (to block on) and leader state
};

/// What client::async_kv_get_raw completes with.
struct kv_raw_result {
    std::optional<std::string> value; ///< empty when the key does not exist
    query_meta meta;                  ///< the read's index (to block on) and leader state
};

/// What client::async_kv_list completes with.
struct kv_list_result {
    std::vector<kv_entry> entries; ///< sorted by key; empty when nothing matches
    query_meta meta;               ///< the read's index (to block on) and leader state
};

/// What client::async_kv_keys completes with.
struct kv_keys_result {
    std::vector<std::string> keys; ///< the key names; empty when nothing matches
    query_meta meta;               ///< the read's index (to block on) and leader state
};

/// Options of client::async_kv_keys. Not an aggregate (see conclave/consul/request.hpp):
/// set fields with the with_* calls.
struct kv_keys_options : detail::options_base<kv_keys_options> {
    kv_keys_options() = default;

    query_options query;   ///< index, wait, consistency, datacenter, diagnostics
    std::string separator; ///< collapse keys at the first separator after the prefix

    kv_keys_options& with_query(query_options v) { return set(query, std::move(v)); }
    kv_keys_options& with_separator(std::string v) { return set(separator, std::move(v)); }
};

/// A KV write. At most one of cas, acquire, release may be set.
struct kv_put_options : request_options<kv_put_options> {
    kv_put_options() = default;

    /// Flags to store. Every write replaces the flags: a write without them stores 0.
    std::uint64_t flags = 0;
    std::optional<std::uint64_t> cas; ///< 0: create only if absent; N: only if ModifyIndex == N
    std::string acquire;              ///< lock with this session
    std::string release;              ///< unlock held by this session
    /// Bounds this request (a wait for a connection included), when shorter than the
    /// client's request_timeout; it then fails with errc::timeout. 0: request_timeout.
    std::chrono::milliseconds timeout{0};

    kv_put_options& with_flags(std::uint64_t v) { return set(flags, v); }
    kv_put_options& with_cas(std::uint64_t v) { return set(cas, v); }
    kv_put_options& with_acquire(std::string session) { return set(acquire, std::move(session)); }
    kv_put_options& with_release(std::string session) { return set(release, std::move(session)); }
    kv_put_options& with_timeout(std::chrono::milliseconds v) { return set(timeout, v); }
};

/// A KV delete. Consul refuses recurse and cas together (errc::bad_request).
struct kv_delete_options : request_options<kv_delete_options> {
    kv_delete_options() = default;

    bool recurse = false;             ///< delete every key with this prefix
    std::optional<std::uint64_t> cas; ///< only if ModifyIndex == N (absent key: true)
    /// Bounds this request (a wait for a connection included), when shorter than the
    /// client's request_timeout; it then fails with errc::timeout. 0: request_timeout.
    std::chrono::milliseconds timeout{0};

    kv_delete_options& with_recurse(bool v = true) { return set(recurse, v); }
    kv_delete_options& with_cas(std::uint64_t v) { return set(cas, v); }
    kv_delete_options& with_timeout(std::chrono::milliseconds v) { return set(timeout, v); }
};

} // namespace conclave
