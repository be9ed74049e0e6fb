// SPDX-License-Identifier: BSL-1.0
// The transactions of a multi-lock, without I/O: the acquire's ops, the release's ops, the
// guard of a guarded transaction, and the keys' entries in a transaction's answer. Here
// rather than inside the coroutines that send them (multi_lock.cpp, multi_lease.cpp) so that
// unit tests reach them without a server.
#pragma once

#include "recipes/multi_lock/multi_lock_state.hpp"

#include <conclave/consul/txn.hpp>
#include <conclave/error.hpp>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

namespace conclave::detail {

/// Consul's limit of operations in one transaction.
inline constexpr std::size_t max_txn_ops = 64;

/// The acquire's transaction: every key checked as its hub last saw it (its ModifyIndex, or
/// absent) and locked with `session`, all or nothing: two ops per key, in the keys' order.
inline std::vector<txn_op> attempt_ops(const multi_lock_state& m, const std::string& session) {
    std::vector<txn_op> ops;
    ops.reserve(2 * m.keys.size());
    for (const auto& hub : m.hubs) {
        if (hub->entry())
            ops.push_back(txn_op::check_index(hub->key, hub->entry()->modify_index));
        else
            ops.push_back(txn_op::check_not_exists(hub->key));
        ops.push_back(txn_op::lock(hub->key, session, m.opts.value, lock_flag_value));
    }
    return ops;
}

/// Whether a live grant of this process other than `self` holds the key of `hub` (a lock's
/// lease, another multi-lock's grant, with the same session): not ours to unlock.
inline bool held_by_another_grant(const key_hub& hub, const grant_state* self) {
    const auto holder = hub.local_holder();
    return holder && holder.get() != self && !holder->released && !holder->lost;
}

/// The release's transaction: an unlock by `session` of every key no other live grant of
/// this process holds, in the keys' order.
inline std::vector<txn_op> release_ops(const multi_lock_state& m, const std::string& session,
                                       const grant_state* self) {
    std::vector<txn_op> ops;
    for (const auto& hub : m.hubs)
        if (!held_by_another_grant(*hub, self))
            ops.push_back(txn_op::unlock(hub->key, session, m.opts.value, lock_flag_value));
    return ops;
}

/// For each of `keys` (sorted), the last entry of `results` naming it (a check-index answers
/// with the key before the write, the lock after it), or null. Entries of other keys are
/// ignored.
inline std::vector<const kv_entry*> entries_by_key(const std::vector<std::string>& keys,
                                                   const std::vector<kv_entry>& results) {
    std::vector<const kv_entry*> out(keys.size(), nullptr);
    for (const auto& r : results) {
        const auto at = std::lower_bound(keys.begin(), keys.end(), r.key);
        if (at != keys.end() && *at == r.key)
            out[at - keys.begin()] = &r;
    }
    return out;
}

/// A guarded transaction's ops: a check that `session` holds each of `keys`, then `ops`.
/// errc::invalid_argument (and `ops` untouched) when the whole would pass Consul's limit.
inline error_code guard_ops(const std::vector<std::string>& keys, const std::string& session,
                            std::vector<txn_op>& ops) {
    if (ops.size() + keys.size() > max_txn_ops)
        return make_error_code(errc::invalid_argument);
    std::vector<txn_op> checks;
    checks.reserve(keys.size() + ops.size());
    for (const auto& key : keys)
        checks.push_back(txn_op::check_session(key, session));
    checks.insert(checks.end(), std::make_move_iterator(ops.begin()),
                  std::make_move_iterator(ops.end()));
    ops = std::move(checks);
    return {};
}

/// A guarded transaction's answer as the caller's ops see it, `guards` being the number of
/// checks in front. False when a check failed (the grant is lost); else the checks' results
/// are dropped from a commit, and a rollback's errors count positions in the caller's ops.
inline bool unguard_result(std::size_t guards, txn_result& t) {
    if (!t.committed) {
        const bool guard_failed =
            std::any_of(t.errors.begin(), t.errors.end(),
                        [guards](const txn_error& e) { return e.op_index < guards; });
        if (guard_failed)
            return false;
        for (auto& e : t.errors)
            e.op_index -= guards;
    } else {
        t.results.erase(t.results.begin(),
                        t.results.begin() + std::min<std::size_t>(guards, t.results.size()));
    }
    return true;
}

} // namespace conclave::detail
