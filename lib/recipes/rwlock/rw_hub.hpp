// SPDX-License-Identifier: BSL-1.0
// rw_hub: what every local user of one read-write lock shares: its contenders as last read,
// and one blocking list query of the key's prefix that keeps them fresh (readers and
// writers of one client, however many, cost one query).
#pragma once

#include "recipes/common/grant.hpp"
#include "recipes/common/list_hub.hpp"
#include "recipes/rwlock/rw_rules.hpp"

#include <conclave/client.hpp>

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace conclave::detail {

class rw_hub final : public list_hub {
public:
    /// The hub of `key` on `c`, shared by every read_write_lock of that client and key.
    static std::shared_ptr<rw_hub> of(const client& c, const std::string& key, settings s);

    rw_hub(client c, std::string key, settings s);

    const std::string key;
    /// `<key>/.rwlock`: rewritten by every acquire (see rw_rules.hpp).
    const std::string sequence_key;
    /// `<key>/.rwlock/`: where contender keys live.
    std::string contender_prefix() const { return sequence_key + "/"; }

    // ---- the state as last read (known(), state_index(): see shared_query) ------------
    /// The contenders, oldest first.
    const std::vector<rw_contender>& contenders() const noexcept { return contenders_; }
    /// ModifyIndex of the sequence key (0: absent).
    std::uint64_t sequence_index() const noexcept { return sequence_index_; }
    /// Why the key is not a read-write lock's (empty: it is, or is free): a plain lock on
    /// `<key>`, a semaphore or `consul lock` on `<key>/.lock`, or other flags under
    /// `<key>/.rwlock`. Said in words for the diagnostics.
    const std::string& conflict() const noexcept { return conflict_; }

    /// The grant of contender key `k` was released (its key deleted): while the known state
    /// still shows it, nobody here judges on it until the next read, which the delete wakes
    /// (the read in flight blocks at an index before it; it is not cut, which would cost its
    /// connection every release). A state that no longer shows it is already past the delete.
    void released(const std::string& k) {
        if (known() && rw_find(contenders_, k))
            mark_unknown();
        poke();
    }

    /// Deletes (CAS, in the background, once each) contender keys whose session is gone.
    void prune_dead_contenders();

    /// A contender key of ours changed by a local transaction (an upgrade, a downgrade):
    /// patched into the known state when it is not older, and everyone woken.
    void saw_write(const kv_entry& contender);
    /// The contender key of an acquire of ours that ended without the grant, deleted (not
    /// for a grant's release: the next grant's token must come from a read past it).
    void contender_gone(const std::string& k);

private:
    void store(std::vector<kv_entry> entries) override;

    std::vector<rw_contender> contenders_;
    std::uint64_t sequence_index_ = 0;
    std::string conflict_;
    std::set<std::string> pruning_; ///< dead contender keys being deleted
};

} // namespace conclave::detail
