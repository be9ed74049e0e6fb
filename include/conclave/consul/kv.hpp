// SPDX-License-Identifier: BSL-1.0
// The key/value store's values: entries, the results of reads, the options of writes, and
// the flags Go's lock and semaphore write.
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

/// One KV pair as Consul stores it. An empty value is what Consul reports as `null`.
struct kv_entry {
    std::string key;
    std::string value;
    std::uint64_t flags = 0;
    std::uint64_t lock_index = 0;
    std::string session; ///< holder's session ID, empty when unlocked
    std::uint64_t create_index = 0;
    std::uint64_t modify_index = 0;

    bool operator==(const kv_entry&) const = default;
};

struct kv_get_result {
    std::optional<kv_entry> entry; ///< empty when the key does not exist (HTTP 404)
    query_meta meta;
};

struct kv_raw_result {
    std::optional<std::string> value; ///< empty when the key does not exist
    query_meta meta;
};

struct kv_list_result {
    std::vector<kv_entry> entries; ///< sorted by key; empty when nothing matches
    query_meta meta;
};

struct kv_keys_result {
    std::vector<std::string> keys;
    query_meta meta;
};

struct kv_keys_options {
    kv_keys_options() = default;

    query_options query;
    std::string separator; ///< collapse keys at the first separator after the prefix

    kv_keys_options& with_query(query_options v) {
        query = std::move(v);
        return *this;
    }
    kv_keys_options& with_separator(std::string v) {
        separator = std::move(v);
        return *this;
    }
};

/// A KV write. At most one of cas, acquire, release may be set.
struct kv_put_options {
    kv_put_options() = default;

    /// Flags to store. Every write replaces the flags: a write without them stores 0.
    std::uint64_t flags = 0;
    std::optional<std::uint64_t> cas; ///< 0: create only if absent; N: only if ModifyIndex == N
    std::string acquire;              ///< lock with this session
    std::string release;              ///< unlock held by this session
    std::string datacenter;
    /// Bounds this request (a wait for a connection included), when shorter than the
    /// client's request_timeout; it then fails with errc::timeout. 0: request_timeout.
    std::chrono::milliseconds timeout{0};
    diagnostics* diag = nullptr;

    kv_put_options& with_flags(std::uint64_t v) {
        flags = v;
        return *this;
    }
    kv_put_options& with_cas(std::uint64_t v) {
        cas = v;
        return *this;
    }
    kv_put_options& with_acquire(std::string session) {
        acquire = std::move(session);
        return *this;
    }
    kv_put_options& with_release(std::string session) {
        release = std::move(session);
        return *this;
    }
    kv_put_options& with_datacenter(std::string v) {
        datacenter = std::move(v);
        return *this;
    }
    kv_put_options& with_timeout(std::chrono::milliseconds v) {
        timeout = v;
        return *this;
    }
    kv_put_options& with_diag(diagnostics* v) {
        diag = v;
        return *this;
    }
};

struct kv_delete_options {
    kv_delete_options() = default;

    bool recurse = false;             ///< delete every key with this prefix
    std::optional<std::uint64_t> cas; ///< only if ModifyIndex == N (absent key: true)
    std::string datacenter;
    /// Bounds this request (a wait for a connection included), when shorter than the
    /// client's request_timeout; it then fails with errc::timeout. 0: request_timeout.
    std::chrono::milliseconds timeout{0};
    diagnostics* diag = nullptr;

    kv_delete_options& with_recurse(bool v = true) {
        recurse = v;
        return *this;
    }
    kv_delete_options& with_cas(std::uint64_t v) {
        cas = v;
        return *this;
    }
    kv_delete_options& with_datacenter(std::string v) {
        datacenter = std::move(v);
        return *this;
    }
    kv_delete_options& with_timeout(std::chrono::milliseconds v) {
        timeout = v;
        return *this;
    }
    kv_delete_options& with_diag(diagnostics* v) {
        diag = v;
        return *this;
    }
};

} // namespace conclave
