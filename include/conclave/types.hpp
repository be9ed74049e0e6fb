// SPDX-License-Identifier: BSL-1.0
// Values exchanged with Consul's HTTP API: KV entries, sessions, transactions, query options.
#pragma once

#include <conclave/detail/export.hpp>
#include <conclave/error.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace conclave {

// About the option types below: each declares a default constructor, so none is an
// aggregate and designated initializers ({.index = 5}) do not compile. That is on purpose:
// g++ 12 destroys an aggregate temporary twice when it appears in a co_await expression
// (GCC PR 107288 family), e.g. `co_await c.async_kv_get(k, {.index = 5})` corrupts the
// heap. Set fields by name instead: `query_options{}.with_index(5)`, or on a named object.

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

enum class consistency {
    default_mode, ///< leader answers, may be briefly stale after a leader change
    consistent,   ///< leader verifies its leadership first (?consistent)
    stale,        ///< any server answers (?stale)
};

/// Options of every read. A blocking read is one with index > 0.
struct query_options {
    query_options() = default;

    std::uint64_t index = 0;           ///< block until the result's index exceeds this
    std::chrono::milliseconds wait{0}; ///< blocking wait (0: Consul's default, 5 min)
    consistency mode = consistency::default_mode;
    std::string datacenter;      ///< ?dc= (empty: the client's default)
    diagnostics* diag = nullptr; ///< filled on error when not null

    query_options& with_index(std::uint64_t v) {
        index = v;
        return *this;
    }
    query_options& with_wait(std::chrono::milliseconds v) {
        wait = v;
        return *this;
    }
    query_options& with_mode(consistency v) {
        mode = v;
        return *this;
    }
    query_options& with_datacenter(std::string v) {
        datacenter = std::move(v);
        return *this;
    }
    query_options& with_diag(diagnostics* v) {
        diag = v;
        return *this;
    }

    /// A blocking read: return when the index passes `after`, or after `wait`.
    static query_options blocking(std::uint64_t after, std::chrono::milliseconds wait) {
        return query_options{}.with_index(after).with_wait(wait);
    }
};

/// Options of every write.
struct write_options {
    write_options() = default;

    std::string datacenter;
    /// Bounds this request (a wait for a connection included), when shorter than the
    /// client's request_timeout; it then fails with errc::timeout. 0: request_timeout.
    std::chrono::milliseconds timeout{0};
    diagnostics* diag = nullptr;

    write_options& with_datacenter(std::string v) {
        datacenter = std::move(v);
        return *this;
    }
    write_options& with_timeout(std::chrono::milliseconds v) {
        timeout = v;
        return *this;
    }
    write_options& with_diag(diagnostics* v) {
        diag = v;
        return *this;
    }
};

/// What Consul says about the state a read saw (X-Consul-* headers).
struct query_meta {
    std::uint64_t index = 0; ///< X-Consul-Index (0 when absent, e.g. txn)
    bool known_leader = false;
    std::chrono::milliseconds last_contact{0};
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

enum class session_behavior {
    release,     ///< on invalidation, held keys are unlocked (Consul's default)
    delete_keys, ///< on invalidation, held keys are deleted ("delete")
};

struct service_check {
    std::string id;
    std::string ns; ///< Enterprise namespace (empty otherwise)
    bool operator==(const service_check&) const = default;
};

/// Creation parameters of a session.
struct session_options {
    session_options() = default;

    std::string name;
    std::string node;                 ///< empty: the agent's node
    std::chrono::milliseconds ttl{0}; ///< 0: no TTL
    /// Lock-delay. Empty: Consul's default (15 s). An explicit 0 disables it and is sent.
    std::optional<std::chrono::milliseconds> lock_delay;
    session_behavior behavior = session_behavior::release;
    /// Node health checks. Empty optional: Consul's default (serfHealth). An empty
    /// vector: no node checks at all (the session lives by TTL or explicit destroy).
    std::optional<std::vector<std::string>> node_checks;
    std::vector<service_check> service_checks;
    std::string datacenter;
    diagnostics* diag = nullptr;

    session_options& with_name(std::string v) {
        name = std::move(v);
        return *this;
    }
    session_options& with_node(std::string v) {
        node = std::move(v);
        return *this;
    }
    session_options& with_ttl(std::chrono::milliseconds v) {
        ttl = v;
        return *this;
    }
    session_options& with_lock_delay(std::chrono::milliseconds v) {
        lock_delay = v;
        return *this;
    }
    session_options& with_behavior(session_behavior v) {
        behavior = v;
        return *this;
    }
    session_options& with_node_checks(std::vector<std::string> v) {
        node_checks = std::move(v);
        return *this;
    }
    /// No node checks: the session is bound to nothing but its TTL (or explicit destroy).
    session_options& without_node_checks() {
        node_checks.emplace();
        return *this;
    }
    session_options& with_service_checks(std::vector<service_check> v) {
        service_checks = std::move(v);
        return *this;
    }
    session_options& with_datacenter(std::string v) {
        datacenter = std::move(v);
        return *this;
    }
    session_options& with_diag(diagnostics* v) {
        diag = v;
        return *this;
    }
};

/// A session as Consul reports it.
struct session_entry {
    std::string id;
    std::string name;
    std::string node;
    std::chrono::nanoseconds lock_delay{0};
    session_behavior behavior = session_behavior::release;
    std::string ttl_text;            ///< "TTL" exactly as stored ("" when none)
    std::chrono::nanoseconds ttl{0}; ///< ttl_text parsed
    std::vector<std::string> node_checks;
    std::vector<service_check> service_checks;
    std::uint64_t create_index = 0;
    std::uint64_t modify_index = 0;
};

struct session_info_result {
    std::optional<session_entry> session; ///< empty when unknown (Consul answers [])
    query_meta meta;
};

struct session_list_result {
    std::vector<session_entry> sessions;
    query_meta meta;
};

/// KV verbs of /v1/txn.
enum class kv_verb {
    set,
    cas,
    lock,
    unlock,
    get,
    get_tree,
    check_index,
    check_session,
    check_not_exists,
    delete_key,
    delete_tree,
    delete_cas,
};

/// One KV operation of a transaction. Build them with the named factories.
struct CONCLAVE_DECL txn_op {
    txn_op() = default;

    kv_verb verb = kv_verb::get;
    std::string key;
    std::string value;
    std::uint64_t flags = 0;
    std::uint64_t index = 0;
    std::string session;

    static txn_op set(std::string key, std::string value, std::uint64_t flags = 0);
    static txn_op cas(std::string key, std::string value, std::uint64_t index,
                      std::uint64_t flags = 0);
    static txn_op lock(std::string key, std::string session, std::string value,
                       std::uint64_t flags = 0);
    static txn_op unlock(std::string key, std::string session, std::string value,
                         std::uint64_t flags = 0);
    static txn_op get(std::string key);
    static txn_op get_tree(std::string prefix);
    static txn_op check_index(std::string key, std::uint64_t index);
    static txn_op check_session(std::string key, std::string session);
    static txn_op check_not_exists(std::string key);
    static txn_op remove(std::string key);
    static txn_op remove_tree(std::string prefix);
    static txn_op remove_cas(std::string key, std::uint64_t index);
};

struct txn_error {
    std::size_t op_index = 0;
    std::string what;
};

/// Outcome of a transaction. A rollback (HTTP 409) is a result, not an error code.
struct txn_result {
    bool committed = false;
    std::vector<kv_entry> results; ///< entries of the ops that yield one, in op order
    std::vector<txn_error> errors; ///< why it rolled back
    query_meta meta;               ///< read-only transactions: known_leader, last_contact
};

struct txn_options {
    txn_options() = default;

    consistency mode = consistency::default_mode; ///< read-only transactions only
    std::string datacenter;
    diagnostics* diag = nullptr;

    txn_options& with_mode(consistency v) {
        mode = v;
        return *this;
    }
    txn_options& with_datacenter(std::string v) {
        datacenter = std::move(v);
        return *this;
    }
    txn_options& with_diag(diagnostics* v) {
        diag = v;
        return *this;
    }
};

/// Part of /v1/agent/self.
struct agent_info {
    std::string node_name;
    std::string datacenter;
    std::string version;
};

} // namespace conclave
