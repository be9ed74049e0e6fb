// SPDX-License-Identifier: BSL-1.0
// Transactions (/v1/txn): the KV operations, built with named factories, and the outcome,
// committed or rolled back.
#pragma once

#include <conclave/consul/kv.hpp>
#include <conclave/detail/export.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace conclave {

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

} // namespace conclave
