// SPDX-License-Identifier: BSL-1.0
/// \file
/// Transactions (/v1/txn): the KV operations, built with named factories, and the outcome,
/// committed or rolled back.
#pragma once

#include <conclave/consul/kv.hpp>
#include <conclave/detail/export.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace conclave {

/// KV verbs of /v1/txn, each with Consul's name for it. txn_op's factories say what each
/// does.
enum class kv_verb {
    set,              ///< `set`
    cas,              ///< `cas`
    lock,             ///< `lock`
    unlock,           ///< `unlock`
    get,              ///< `get`
    get_tree,         ///< `get-tree`
    check_index,      ///< `check-index`
    check_session,    ///< `check-session`
    check_not_exists, ///< `check-not-exists`
    delete_key,       ///< `delete`
    delete_tree,      ///< `delete-tree`
    delete_cas,       ///< `delete-cas`
};

/// One KV operation of a transaction. Build them with the named factories. An op that
/// fails rolls the whole transaction back (txn_result::errors says why).
struct CONCLAVE_DECL txn_op {
    txn_op() = default;

    kv_verb verb = kv_verb::get; ///< what the op does
    std::string key;             ///< the key (the prefix for get_tree and remove_tree)
    std::string value;           ///< what set, cas, lock and unlock write
    std::uint64_t flags = 0;     ///< the flags they write with it
    std::uint64_t index = 0;     ///< the ModifyIndex that cas, check_index and remove_cas expect
    std::string session;         ///< the session of lock, unlock and check_session
    /// Consul Enterprise: the key's namespace (empty: the transaction's, see txn_options).
    std::string namespace_name;
    /// Consul Enterprise: the key's admin partition (empty: the transaction's).
    std::string partition;

    /// Writes `value` and `flags` to `key`.
    static txn_op set(std::string key, std::string value, std::uint64_t flags = 0);
    /// Writes `value` and `flags` to `key` if its ModifyIndex is `index`; with index 0, only
    /// if the key does not exist.
    static txn_op cas(std::string key, std::string value, std::uint64_t index,
                      std::uint64_t flags = 0);
    /// Acquires `key` with `session` and writes `value` and `flags`; fails while another
    /// session holds the key or during its lock-delay.
    static txn_op lock(std::string key, std::string session, std::string value,
                       std::uint64_t flags = 0);
    /// Releases `key`, which `session` must hold, and writes `value` and `flags`.
    static txn_op unlock(std::string key, std::string session, std::string value,
                         std::uint64_t flags = 0);
    /// Reads `key`; fails if it does not exist.
    static txn_op get(std::string key);
    /// Reads every key that starts with `prefix`.
    static txn_op get_tree(std::string prefix);
    /// Fails unless the ModifyIndex of `key` is `index`.
    static txn_op check_index(std::string key, std::uint64_t index);
    /// Fails unless `key` is held by `session`.
    static txn_op check_session(std::string key, std::string session);
    /// Fails if `key` exists.
    static txn_op check_not_exists(std::string key);
    /// Deletes `key` (kv_verb::delete_key).
    static txn_op remove(std::string key);
    /// Deletes every key that starts with `prefix` (kv_verb::delete_tree).
    static txn_op remove_tree(std::string prefix);
    /// Deletes `key` if its ModifyIndex is `index` (kv_verb::delete_cas).
    static txn_op remove_cas(std::string key, std::uint64_t index);
};

/// Why one op of a rolled-back transaction failed.
struct txn_error {
    std::size_t op_index = 0; ///< the op's position in the transaction, from 0
    std::string what;         ///< Consul's text
};

/// Outcome of a transaction. A rollback (HTTP 409) is a result, not an error code.
struct txn_result {
    bool committed = false;        ///< true: applied; false: rolled back, nothing applied
    std::vector<kv_entry> results; ///< entries of the ops that yield one, in op order
    std::vector<txn_error> errors; ///< why it rolled back
    query_meta meta;               ///< read-only transactions: known_leader, last_contact
};

/// Options of client::async_txn. Not an aggregate (see conclave/consul/request.hpp): set
/// fields with the with_* calls.
struct txn_options : request_options<txn_options> {
    txn_options() = default;

    consistency mode = consistency::default_mode; ///< read-only transactions only

    txn_options& with_mode(consistency v) { return set(mode, v); }
};

} // namespace conclave
