// SPDX-License-Identifier: BSL-1.0
// The dev agent's state store: KV (with tombstones and lock-delays), sessions, and the small
// catalog that sessions are bound to, with one global Raft-like index and per-table max
// indexes, all following Consul 1.8's state store (agent/consul/state). Sans-I/O: time comes
// in as arguments and changes go out through callbacks.
#pragma once

#include "devagent/src/store/radix.hpp"

#include <conclave/consul/session.hpp>
#include <conclave/consul/txn.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::dev::detail {

using steady_time = std::chrono::steady_clock::time_point;

/// Channel numbers a blocking query waits on (see radix.hpp).
using watch_set = std::vector<std::uint64_t>;

/// Consul's structs.MaxLockDelay.
inline constexpr std::chrono::seconds max_lock_delay{60};

struct session_rec {
    std::string id;  ///< as generated (lower-case UUID)
    std::string key; ///< go-memdb's UUID index key (16 bytes)
    std::string name;
    std::string node;
    std::int64_t lock_delay_ns = 15'000'000'000;
    std::string behavior = "release";
    std::string ttl;
    std::optional<std::vector<std::string>> node_checks;      ///< nullopt: JSON null
    std::optional<std::vector<service_check>> service_checks; ///< nullopt: JSON null
    std::vector<std::string> checks;                          ///< legacy; omitted when empty
    std::uint64_t create_index = 0;
    std::uint64_t modify_index = 0;

    /// structs.Session.CheckIDs(): Checks, then NodeChecks, then ServiceChecks.
    std::vector<std::string> check_ids() const;
};

struct check_rec {
    std::string node;
    std::string id;
    std::string name;
    std::string status;
    std::string notes;
    std::string output;
    std::string service_id;
    std::string service_name;
    std::uint64_t create_index = 0;
    std::uint64_t modify_index = 0;
};

struct service_rec {
    std::string id;
    std::string service;
    std::vector<std::string> tags;
    std::string address;
    std::int64_t port = 0;
    std::uint64_t create_index = 0;
    std::uint64_t modify_index = 0;
};

struct node_rec {
    std::string name;
    std::string id;
    std::string address;
    std::string datacenter;
    std::map<std::string, std::string> tagged_addresses;
    std::map<std::string, std::string> meta;
    std::map<std::string, service_rec> services;
    std::map<std::string, check_rec> checks;
    std::uint64_t create_index = 0;
    std::uint64_t modify_index = 0;
};

struct register_request {
    std::string node;
    std::string id;
    std::string address;
    std::map<std::string, std::string> tagged_addresses;
    std::map<std::string, std::string> meta;
    bool skip_node_update = false;
    std::optional<service_rec> service;
    std::vector<check_rec> checks;
};

/// KV operations of KVS.Apply and of /v1/txn (api.KVOp).
enum class kv_op {
    set,
    cas,
    lock,
    unlock,
    del,
    delete_cas,
    delete_tree,
    get,
    get_tree,
    check_session,
    check_index,
    check_not_exists,
    unknown,
};

/// api.KVOp name ("set", "delete-cas", ...) to kv_op (unknown for anything else).
kv_op kv_op_from_verb(std::string_view verb);
/// Writes go through Raft; reads and unknown verbs do not.
bool kv_op_is_write(kv_op op);

struct txn_op_in {
    bool is_kv = true;
    std::string verb;   ///< as sent
    kv_entry entry;     ///< Key, Value, Flags, Session; modify_index carries Index
    std::string family; ///< "Node", "Service", "Check" when !is_kv
};

struct txn_result_entry {
    kv_entry entry;
    bool with_value = false;
};

struct txn_outcome {
    bool applied = false;
    std::vector<txn_result_entry> results;
    std::vector<std::pair<std::size_t, std::string>> errors; ///< (OpIndex, What)
};

struct apply_outcome {
    bool result = false; ///< the bool KVS.Apply returns (cas, lock, unlock, delete-cas)
    std::string error;   ///< non-empty: the RPC failed with this text
};

class store {
public:
    store(std::string node_name, std::string datacenter);

    // ---- notifications --------------------------------------------------------------------
    /// Called after every applied write (and rollback) with the channels it closed.
    std::function<void(const std::vector<std::uint64_t>&)> on_change;
    /// Called when a session is destroyed for any reason.
    std::function<void(const std::string& id)> on_session_destroyed;

    // ---- indexes ----------------------------------------------------------------------------
    std::uint64_t last_index() const { return index_; }
    std::uint64_t kvs_max_index() const;
    std::uint64_t sessions_index() const { return tables_.sessions; }

    // ---- KV reads (ws != nullptr: also collect what to watch) -----------------------------
    struct kv_get_result {
        std::uint64_t index = 0;
        const kv_entry* entry = nullptr;
    };
    kv_get_result kv_get(std::string_view key, watch_set* ws) const;

    struct kv_list_result {
        std::uint64_t index = 0;
        std::vector<const kv_entry*> entries;
    };
    kv_list_result kv_list(std::string_view prefix, watch_set* ws) const;

    struct kv_keys_result {
        std::uint64_t index = 0;
        std::vector<std::string> keys;
    };
    kv_keys_result kv_keys(std::string_view prefix, std::string_view separator,
                           watch_set* ws) const;

    /// When the lock-delay of a key ends (a time in the past when there is none).
    steady_time lock_delay_until(std::string_view key) const;

    // ---- KV writes: one KVS.Apply each (the lock-delay pre-check included) -------------
    apply_outcome kv_apply(kv_op op, kv_entry entry, steady_time now);

    // ---- transactions -------------------------------------------------------------------
    /// By value: the writes take their operation's entry over.
    txn_outcome txn(std::vector<txn_op_in> ops, bool read_only, steady_time now);

    // ---- sessions ------------------------------------------------------------------------
    struct session_get_result {
        std::uint64_t index = 0;
        const session_rec* session = nullptr;
        std::string error;
    };
    session_get_result session_get(std::string_view id, watch_set* ws) const;

    struct session_list_result {
        std::uint64_t index = 0;
        std::vector<const session_rec*> sessions;
    };
    session_list_result session_list(watch_set* ws) const;
    session_list_result node_sessions(std::string_view node, watch_set* ws) const;

    /// Session.Apply create after the RPC-layer checks: node and checks must exist.
    std::string session_create(session_rec s);
    /// Session.Apply destroy (also TTL expiry): unknown IDs are fine; bad UUIDs are errors.
    std::string session_destroy(std::string_view id, steady_time now);

    // ---- catalog -------------------------------------------------------------------------
    std::string catalog_register(register_request r, steady_time now);
    std::string catalog_deregister(std::string_view node, std::string_view service_id,
                                   std::string_view check_id, steady_time now);
    const node_rec* node(std::string_view name) const;
    const std::map<std::string, node_rec>& nodes() const { return nodes_; }

    // ---- controls ------------------------------------------------------------------------
    /// Empties everything and starts the index again (a fresh dev agent).
    void reset();
    /// Drops every tombstone; returns how many.
    std::size_t reap_tombstones();
    std::size_t key_count() const { return kvs_.size(); }
    std::size_t session_count() const { return sessions_.size(); }

private:
    struct table_indexes {
        std::uint64_t kvs = 0;
        std::uint64_t tombstones = 0;
        std::uint64_t sessions = 0;
        std::uint64_t nodes = 0;
        std::uint64_t services = 0;
        std::uint64_t checks = 0;
    };
    struct kv_undo {
        bool tombstone = false;
        std::string key;
        std::optional<kv_entry> entry;
        std::optional<std::uint64_t> stone;
    };

    std::string node_name_;
    std::string datacenter_;
    std::uint64_t index_ = 0;
    table_indexes tables_;
    channel_source channels_;
    // Transparent comparators: lookups by a request's string_view need no key copy.
    std::map<std::string, kv_entry, std::less<>> kvs_;
    std::map<std::string, std::uint64_t, std::less<>> tombstones_;
    std::map<std::string, steady_time, std::less<>> lock_delays_;
    /// Keys each session holds, by the session's UUID index key (as Consul's "session"
    /// index on KV entries): every spelling of an ID names the same session.
    std::map<std::string, std::set<std::string>, std::less<>> held_;
    std::map<std::string, session_rec, std::less<>> sessions_; ///< by UUID index key
    std::map<std::string, node_rec> nodes_;                    ///< by lower-case name
    radix_tree kv_tree_;
    radix_tree session_tree_;      ///< sessions "id" index
    radix_tree session_node_tree_; ///< sessions "node" index
    std::vector<kv_undo>* undo_ = nullptr;
    std::vector<kv_undo> undo_log_; ///< txn()'s undo entries (empty between transactions)

    void bootstrap();
    std::uint64_t next_index() { return ++index_; }
    void publish();

    // KV primitives (record undo entries inside a transaction)
    void kv_store(kv_entry e);
    /// Records that `session` (as a KV entry spells it) holds `key`.
    void hold(std::string_view session, const std::string& key);
    /// Forgets it; the session's entry goes once empty unless `keep_empty`.
    void unhold(std::string_view session, const std::string& key, bool keep_empty);
    void kv_remove(const std::string& key);
    void tomb_set(const std::string& key, std::uint64_t idx);
    std::uint64_t graveyard_max(std::string_view prefix) const;
    /// The index of a read under `prefix` (kvsListTxn, KVSKeys): the highest modify index of
    /// its entries (`entries_max`) or tombstones, else the KV tables' index.
    std::uint64_t prefix_read_index(std::string_view prefix, std::uint64_t entries_max) const;

    // Consul's state functions (agent/consul/state/kvs.go)
    /// Stores e with its indexes set; the store takes e's value over (e keeps the rest).
    void kvs_set(std::uint64_t idx, kv_entry& e, bool update_session);
    bool kvs_set_cas(std::uint64_t idx, kv_entry& e);
    bool kvs_lock(std::uint64_t idx, kv_entry& e, std::string& error);
    bool kvs_unlock(std::uint64_t idx, kv_entry& e, std::string& error);
    void kvs_delete(std::uint64_t idx, const std::string& key);
    bool kvs_delete_cas(std::uint64_t idx, std::uint64_t cas, const std::string& key);
    void kvs_delete_tree(std::uint64_t idx, const std::string& prefix);
    std::optional<txn_result_entry> txn_kv(std::uint64_t idx, txn_op_in& op,
                                           std::vector<txn_result_entry>& tree_out,
                                           std::string& error);

    // sessions
    const session_rec* find_session(std::string_view id, std::string& error) const;
    void delete_session(std::uint64_t idx, const std::string& key, steady_time now);
    void invalidate_check(std::uint64_t idx, const std::string& node, const std::string& check,
                          steady_time now);
    static std::string node_key(std::string_view node, std::string_view session_key);
};

} // namespace conclave::dev::detail
