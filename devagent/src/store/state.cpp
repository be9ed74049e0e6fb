// SPDX-License-Identifier: BSL-1.0
// KV tables, transactions and the store's plumbing. Sessions and the catalog are in
// state_session.cpp.
#include "codec/go/quote.hpp"
#include "devagent/src/go/goutil.hpp"
#include "devagent/src/store/state.hpp"

#include <algorithm>
#include <utility>

namespace conclave::dev::detail {

namespace {

// structs.DirEntry.Equal
bool same_entry(const kv_entry& a, const kv_entry& b) {
    return a.lock_index == b.lock_index && a.key == b.key && a.flags == b.flags &&
           a.value == b.value && a.session == b.session;
}

// The radix tree's key: the KV key and a NUL (as Consul's go-memdb string index). Built in a
// per-thread buffer, since every write and watched read needs one only for the call.
const std::string& tree_key(std::string_view key) {
    thread_local std::string k;
    k.assign(key);
    k += '\0';
    return k;
}

// The first check of KVSLock and KVSUnlock: an entry names the session that locks or unlocks.
bool session_missing(const kv_entry& e, std::string& error) {
    if (!e.session.empty())
        return false;
    error = "missing session";
    return true;
}

} // namespace

kv_op kv_op_from_verb(std::string_view verb) {
    // Every transaction operation is looked up several times: a short table, whose names
    // are compared by length first (string_view's ==).
    static constexpr std::pair<std::string_view, kv_op> verbs[] = {
        {"set", kv_op::set},
        {"cas", kv_op::cas},
        {"get", kv_op::get},
        {"lock", kv_op::lock},
        {"unlock", kv_op::unlock},
        {"delete", kv_op::del},
        {"get-tree", kv_op::get_tree},
        {"delete-cas", kv_op::delete_cas},
        {"delete-tree", kv_op::delete_tree},
        {"check-index", kv_op::check_index},
        {"check-session", kv_op::check_session},
        {"check-not-exists", kv_op::check_not_exists},
    };
    for (const auto& [name, op] : verbs)
        if (name == verb)
            return op;
    return kv_op::unknown;
}

bool kv_op_is_write(kv_op op) {
    switch (op) {
    case kv_op::set:
    case kv_op::cas:
    case kv_op::lock:
    case kv_op::unlock:
    case kv_op::del:
    case kv_op::delete_cas:
    case kv_op::delete_tree:
        return true;
    default:
        return false;
    }
}

store::store(std::string node_name, std::string datacenter)
    : node_name_(std::move(node_name))
    , datacenter_(std::move(datacenter))
    , kv_tree_(channels_)
    , session_tree_(channels_)
    , session_node_tree_(channels_) {
    bootstrap();
}

std::uint64_t store::kvs_max_index() const {
    return std::max(tables_.kvs, tables_.tombstones);
}

void store::publish() {
    if (channels_.closed.empty())
        return;
    std::vector<std::uint64_t> closed;
    closed.swap(channels_.closed);
    if (on_change)
        on_change(closed);
    // Hand the buffer back, so the next write does not grow a fresh one (unless the
    // callback wrote again meanwhile).
    if (channels_.closed.empty()) {
        closed.clear();
        channels_.closed.swap(closed);
    }
}

// ---- KV primitives --------------------------------------------------------------------------

namespace {

// The held-keys map's key for a session as a KV entry spells it: the UUID's bytes, or the
// text itself when it is no UUID (no session has it).
std::string_view held_key(std::string_view session, char (&raw)[16], std::string& parsed) {
    if (canonical_uuid_key(session, raw))
        return {raw, sizeof raw};
    if (auto key = memdb_uuid(session); key.bytes) {
        parsed = std::move(*key.bytes);
        return parsed;
    }
    return session;
}

} // namespace

void store::hold(std::string_view session, const std::string& key) {
    char raw[16];
    std::string parsed;
    const std::string_view k = held_key(session, raw, parsed);
    auto h = held_.find(k);
    if (h == held_.end())
        h = held_.emplace(std::string(k), std::set<std::string>{}).first;
    h->second.insert(key);
}

void store::unhold(std::string_view session, const std::string& key, bool keep_empty) {
    char raw[16];
    std::string parsed;
    auto h = held_.find(held_key(session, raw, parsed));
    if (h == held_.end())
        return;
    h->second.erase(key);
    if (h->second.empty() && !keep_empty)
        held_.erase(h);
}

void store::kv_store(kv_entry e) {
    auto it = kvs_.find(e.key);
    const bool exists = it != kvs_.end();
    // The keys a session holds change only when the holder does (a lock taken again by its
    // holder, a set of an unlocked key: most writes).
    if (!exists || it->second.session != e.session) {
        // A session that released its last key keeps its (empty) entry: it usually takes a
        // lock again soon (a lock cycle), and session_destroy drops the entry.
        if (exists && !it->second.session.empty())
            unhold(it->second.session, e.key, true);
        if (!e.session.empty())
            hold(e.session, e.key);
    }
    kv_tree_.insert(tree_key(e.key));
    if (exists) {
        // The entry replaced is kept by the undo log as it is, not copied.
        if (undo_)
            undo_->push_back({false, e.key, std::move(it->second), std::nullopt});
        it->second = std::move(e);
    } else {
        if (undo_)
            undo_->push_back({false, e.key, std::nullopt, std::nullopt});
        std::string key = e.key;
        kvs_.emplace(std::move(key), std::move(e));
    }
}

void store::kv_remove(const std::string& key) {
    auto it = kvs_.find(key);
    if (it == kvs_.end())
        return;
    if (undo_)
        undo_->push_back({false, key, it->second, std::nullopt});
    if (!it->second.session.empty())
        unhold(it->second.session, key, false);
    kvs_.erase(it);
    kv_tree_.erase(tree_key(key));
}

void store::tomb_set(const std::string& key, std::uint64_t idx) {
    auto it = tombstones_.find(key);
    if (undo_)
        undo_->push_back(
            {true, key, std::nullopt,
             it != tombstones_.end() ? std::optional<std::uint64_t>(it->second) : std::nullopt});
    tombstones_[key] = idx;
    tables_.tombstones = idx;
}

std::uint64_t store::graveyard_max(std::string_view prefix) const {
    std::uint64_t max = 0;
    for (auto it = tombstones_.lower_bound(prefix);
         it != tombstones_.end() && it->first.starts_with(prefix); ++it)
        max = std::max(max, it->second);
    return max;
}

// ---- KV reads ---------------------------------------------------------------------------------

std::uint64_t store::prefix_read_index(std::string_view prefix, std::uint64_t entries_max) const {
    const std::uint64_t idx = kvs_max_index();
    std::uint64_t lindex = entries_max;
    if (!prefix.empty())
        lindex = std::max(lindex, graveyard_max(prefix));
    else
        lindex = idx; // the whole store: its tables' index
    return lindex != 0 ? lindex : idx;
}

store::kv_get_result store::kv_get(std::string_view key, watch_set* ws) const {
    kv_get_result r;
    r.index = kvs_max_index();
    if (ws)
        ws->push_back(kv_tree_.watch_key(tree_key(key)));
    auto it = kvs_.find(key);
    if (it != kvs_.end()) {
        r.entry = &it->second;
        r.index = it->second.modify_index;
    }
    return r;
}

store::kv_list_result store::kv_list(std::string_view prefix, watch_set* ws) const {
    kv_list_result r;
    if (ws)
        ws->push_back(kv_tree_.watch_prefix(prefix));
    std::uint64_t lindex = 0;
    for (auto it = kvs_.lower_bound(prefix); it != kvs_.end() && it->first.starts_with(prefix);
         ++it) {
        r.entries.push_back(&it->second);
        lindex = std::max(lindex, it->second.modify_index);
    }
    r.index = prefix_read_index(prefix, lindex);
    return r;
}

store::kv_keys_result store::kv_keys(std::string_view prefix, std::string_view separator,
                                     watch_set* ws) const {
    kv_keys_result r;
    if (ws)
        ws->push_back(kv_tree_.watch_prefix(prefix));
    std::uint64_t lindex = 0;
    std::string last;
    for (auto it = kvs_.lower_bound(prefix); it != kvs_.end() && it->first.starts_with(prefix);
         ++it) {
        const kv_entry& e = it->second;
        lindex = std::max(lindex, e.modify_index);
        if (separator.empty()) {
            r.keys.push_back(e.key);
            continue;
        }
        const std::string_view after = std::string_view(e.key).substr(prefix.size());
        const auto pos = after.find(separator);
        if (pos != std::string_view::npos) {
            std::string key = e.key.substr(0, prefix.size() + pos + separator.size());
            if (key != last) {
                r.keys.push_back(key);
                last = std::move(key);
            }
        } else {
            r.keys.push_back(e.key);
        }
    }
    r.index = prefix_read_index(prefix, lindex);
    return r;
}

steady_time store::lock_delay_until(std::string_view key) const {
    auto it = lock_delays_.find(key);
    return it == lock_delays_.end() ? steady_time{} : it->second;
}

// ---- Consul's KV state functions ------------------------------------------------------------

void store::kvs_set(std::uint64_t idx, kv_entry& e, bool update_session) {
    auto it = kvs_.find(e.key);
    const kv_entry* existing = it != kvs_.end() ? &it->second : nullptr;
    e.create_index = existing ? existing->create_index : idx;
    if (!update_session)
        e.session = existing ? existing->session : std::string();
    if (existing && same_entry(*existing, e)) {
        e.modify_index = existing->modify_index;
        return;
    }
    e.modify_index = idx;
    // The store takes the value over; the rest of e stays the caller's (a transaction's
    // result shows an entry written without its value).
    kv_entry stored;
    stored.key = e.key;
    stored.value = std::move(e.value);
    stored.flags = e.flags;
    stored.lock_index = e.lock_index;
    stored.session = e.session;
    stored.create_index = e.create_index;
    stored.modify_index = e.modify_index;
    kv_store(std::move(stored));
    tables_.kvs = idx;
}

bool store::kvs_set_cas(std::uint64_t idx, kv_entry& e) {
    auto it = kvs_.find(e.key);
    const bool exists = it != kvs_.end();
    if (e.modify_index == 0 && exists)
        return false;
    if (e.modify_index != 0 && !exists)
        return false;
    if (exists && e.modify_index != 0 && e.modify_index != it->second.modify_index)
        return false;
    kvs_set(idx, e, false);
    return true;
}

bool store::kvs_lock(std::uint64_t idx, kv_entry& e, std::string& error) {
    if (session_missing(e, error))
        return false;
    std::string lookup_error;
    if (find_session(e.session, lookup_error) == nullptr) {
        error =
            lookup_error.empty() ? "invalid session " + codec::go::quote(e.session) : lookup_error;
        return false;
    }
    auto it = kvs_.find(e.key);
    if (it != kvs_.end()) {
        const kv_entry& cur = it->second;
        if (cur.session == e.session) {
            e.create_index = cur.create_index;
            e.lock_index = cur.lock_index;
        } else if (!cur.session.empty()) {
            return false;
        } else {
            e.create_index = cur.create_index;
            e.lock_index = cur.lock_index + 1;
        }
    } else {
        e.create_index = idx;
        e.lock_index = 1;
    }
    e.modify_index = idx;
    kvs_set(idx, e, true);
    return true;
}

bool store::kvs_unlock(std::uint64_t idx, kv_entry& e, std::string& error) {
    if (session_missing(e, error))
        return false;
    auto it = kvs_.find(e.key);
    if (it == kvs_.end() || it->second.session != e.session)
        return false;
    e.session.clear();
    e.lock_index = it->second.lock_index;
    e.create_index = it->second.create_index;
    e.modify_index = idx;
    kvs_set(idx, e, true);
    return true;
}

void store::kvs_delete(std::uint64_t idx, const std::string& key) {
    if (kvs_.find(key) == kvs_.end())
        return;
    tomb_set(key, idx);
    kv_remove(key);
    tables_.kvs = idx;
}

bool store::kvs_delete_cas(std::uint64_t idx, std::uint64_t cas, const std::string& key) {
    auto it = kvs_.find(key);
    if (it == kvs_.end())
        return true;
    if (it->second.modify_index != cas)
        return false;
    kvs_delete(idx, key);
    return true;
}

void store::kvs_delete_tree(std::uint64_t idx, const std::string& prefix) {
    auto first = kvs_.lower_bound(prefix);
    if (first == kvs_.end() || !first->first.starts_with(prefix))
        return;
    std::vector<std::string> doomed;
    for (auto it = first; it != kvs_.end() && it->first.starts_with(prefix); ++it)
        doomed.push_back(it->first);
    for (const auto& key : doomed) {
        auto it = kvs_.find(key);
        if (undo_)
            undo_->push_back({false, key, it->second, std::nullopt});
        if (!it->second.session.empty())
            unhold(it->second.session, key, false);
        kvs_.erase(it);
    }
    kv_tree_.erase_prefix(prefix);
    if (!prefix.empty())
        tomb_set(prefix, idx);
    tables_.kvs = idx;
}

apply_outcome store::kv_apply(kv_op op, kv_entry e, steady_time now) {
    apply_outcome out;
    if (e.key.empty() && op != kv_op::delete_tree) {
        out.error = "Must provide key";
        return out;
    }
    if (op == kv_op::lock && lock_delay_until(e.key) > now)
        return out; // refused before Raft: consumes no index
    const std::uint64_t idx = next_index();
    switch (op) {
    case kv_op::set:
        kvs_set(idx, e, false);
        out.result = true;
        break;
    case kv_op::cas:
        out.result = kvs_set_cas(idx, e);
        break;
    case kv_op::lock:
        out.result = kvs_lock(idx, e, out.error);
        break;
    case kv_op::unlock:
        out.result = kvs_unlock(idx, e, out.error);
        break;
    case kv_op::del:
        kvs_delete(idx, e.key);
        out.result = true;
        break;
    case kv_op::delete_cas:
        out.result = kvs_delete_cas(idx, e.modify_index, e.key);
        break;
    case kv_op::delete_tree:
        kvs_delete_tree(idx, e.key);
        out.result = true;
        break;
    default:
        out.error = "Invalid operation";
        break;
    }
    publish();
    return out;
}

// ---- transactions -------------------------------------------------------------------------

std::optional<txn_result_entry> store::txn_kv(std::uint64_t idx, txn_op_in& op,
                                              std::vector<txn_result_entry>& tree_out,
                                              std::string& error) {
    // The writes take the operation's entry over (the transaction's operations are not
    // used after it), and the key is quoted only for an error text: both cost allocations
    // on every lock and release otherwise.
    const kv_op verb = kv_op_from_verb(op.verb);
    const bool writes_entry =
        verb == kv_op::set || verb == kv_op::cas || verb == kv_op::lock || verb == kv_op::unlock;
    kv_entry e;
    if (writes_entry)
        e = std::move(op.entry);
    const std::string& key = writes_entry ? e.key : op.entry.key;
    const auto quoted = [&] { return codec::go::quote(key); };
    switch (verb) {
    case kv_op::set:
        kvs_set(idx, e, false);
        return txn_result_entry{std::move(e), false};
    case kv_op::del:
        kvs_delete(idx, key);
        return std::nullopt;
    case kv_op::delete_cas:
        if (!kvs_delete_cas(idx, op.entry.modify_index, key))
            error = "failed to delete key " + quoted() + ", index is stale";
        return std::nullopt;
    case kv_op::delete_tree:
        kvs_delete_tree(idx, key);
        return std::nullopt;
    case kv_op::cas:
        if (!kvs_set_cas(idx, e)) {
            error = "failed to set key " + quoted() + ", index is stale";
            return std::nullopt;
        }
        return txn_result_entry{std::move(e), false};
    case kv_op::lock:
    case kv_op::unlock: {
        const bool locking = verb == kv_op::lock;
        const bool ok = locking ? kvs_lock(idx, e, error) : kvs_unlock(idx, e, error);
        if (!error.empty())
            return std::nullopt;
        if (!ok) {
            error = locking ? "failed to lock key " + quoted() + ", lock is already held"
                            : "failed to unlock key " + quoted() +
                                  ", lock isn't held, or is held by another session";
            return std::nullopt;
        }
        return txn_result_entry{std::move(e), false};
    }
    case kv_op::get: {
        auto it = kvs_.find(key);
        if (it == kvs_.end()) {
            error = "key " + quoted() + " doesn't exist";
            return std::nullopt;
        }
        return txn_result_entry{it->second, true};
    }
    case kv_op::get_tree: {
        for (auto it = kvs_.lower_bound(key); it != kvs_.end() && it->first.starts_with(key); ++it)
            tree_out.push_back({it->second, true});
        return std::nullopt;
    }
    case kv_op::check_session:
    case kv_op::check_index: {
        const bool by_session = verb == kv_op::check_session;
        auto it = kvs_.find(key);
        if (it == kvs_.end()) {
            error = std::string("failed to check ") + (by_session ? "session" : "index") +
                    ", key " + quoted() + " doesn't exist";
            return std::nullopt;
        }
        const kv_entry& current = it->second;
        if (by_session && current.session != op.entry.session) {
            error = "failed session check for key " + quoted() + ", current session " +
                    codec::go::quote(current.session) + " != " + codec::go::quote(op.entry.session);
            return std::nullopt;
        }
        if (!by_session && current.modify_index != op.entry.modify_index) {
            error = "failed index check for key " + quoted() + ", current modify index " +
                    std::to_string(current.modify_index) +
                    " != " + std::to_string(op.entry.modify_index);
            return std::nullopt;
        }
        return txn_result_entry{current, false};
    }
    case kv_op::check_not_exists:
        if (kvs_.find(key) != kvs_.end())
            error = "key " + quoted() + " exists";
        return std::nullopt;
    case kv_op::unknown:
        break;
    }
    error = "unknown KV verb " + codec::go::quote(op.verb);
    return std::nullopt;
}

txn_outcome store::txn(std::vector<txn_op_in> ops, bool read_only, steady_time now) {
    txn_outcome out;
    // Txn.preCheck: kvsPreApply for every KV op (key present, lock-delay), before Raft.
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const txn_op_in& op = ops[i];
        if (!op.is_kv)
            continue;
        const kv_op kop = kv_op_from_verb(op.verb);
        if (op.entry.key.empty() && kop != kv_op::delete_tree)
            out.errors.emplace_back(i, "Must provide key");
        else if (kop == kv_op::lock && lock_delay_until(op.entry.key) > now)
            out.errors.emplace_back(i, "failed to lock key " + codec::go::quote(op.entry.key) +
                                           " due to lock delay");
    }
    if (!out.errors.empty())
        return out;

    // The undo log's buffer is the store's, kept from one transaction to the next.
    std::vector<kv_undo>& undo = undo_log_;
    undo.clear();
    const table_indexes saved = tables_;
    std::uint64_t idx = 0;
    if (!read_only) {
        idx = next_index();
        // An operation that fails changes nothing (every check comes before its write), so
        // a transaction of one operation has nothing to undo.
        if (ops.size() > 1)
            undo_ = &undo;
    }
    // Usually one result per operation: one allocation rather than growing.
    out.results.reserve(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
        txn_op_in& op = ops[i];
        std::string error;
        if (!op.is_kv) {
            error = "conclave dev agent: " + op.family + " operations are not supported";
        } else {
            std::vector<txn_result_entry> tree;
            auto r = txn_kv(idx, op, tree, error);
            if (r)
                out.results.push_back(std::move(*r));
            for (auto& t : tree)
                out.results.push_back(std::move(t));
        }
        if (!error.empty())
            out.errors.emplace_back(i, std::move(error));
    }
    undo_ = nullptr;
    if (!out.errors.empty()) {
        out.results.clear();
        // Roll back in reverse order; the tree is rebuilt to the same key set.
        for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
            if (it->tombstone) {
                if (it->stone)
                    tombstones_[it->key] = *it->stone;
                else
                    tombstones_.erase(it->key);
                continue;
            }
            auto cur = kvs_.find(it->key);
            if (cur != kvs_.end()) {
                if (!cur->second.session.empty())
                    unhold(cur->second.session, it->key, false);
                kvs_.erase(cur);
                kv_tree_.erase(tree_key(it->key));
            }
            if (it->entry) {
                if (!it->entry->session.empty())
                    hold(it->entry->session, it->key);
                kv_tree_.insert(tree_key(it->key));
                kvs_[it->key] = *it->entry;
            }
        }
        tables_ = saved;
    } else {
        out.applied = true;
    }
    undo.clear();
    publish();
    return out;
}

} // namespace conclave::dev::detail
