// SPDX-License-Identifier: BSL-1.0
// State of a read_write_lock and of its grants.
#pragma once

#include "recipes/common/grant.hpp"
#include "recipes/common/keyed_state.hpp"
#include "recipes/rwlock/rw_hub.hpp"

#include <conclave/read_write_lock.hpp>

#include <memory>
#include <string>

namespace conclave::detail {

struct rwlock_state : keyed_state<read_write_lock_options, rw_hub> {
    rwlock_state(client c, std::string k, const read_write_lock_options& o)
        : keyed_state(std::move(c), std::move(k), o,
                      rw_hub::settings{o.wait, o.monitor_retry_wait}) {}
};

/// Deletes contender key `key` of session `s` in the background, retrying (with pauses)
/// while Consul cannot take it, until it is gone or the session ends (which ends the key
/// too). For a key whose acquire or grant ended without a delete that Consul confirmed.
void leave_for_good(std::shared_ptr<rwlock_state> l, std::shared_ptr<session_state> s,
                    std::string key);

struct rw_lease_state : grant_of<rwlock_state> {
    rw_lease_state(std::shared_ptr<rwlock_state> l, std::shared_ptr<session_state> s,
                   fencing_token t, std::string contender, rw_mode m)
        : grant_of(std::move(l), std::move(s), std::move(t), hold_kind::read_write_lock)
        , contender_key(std::move(contender))
        , mode(m) {}
    // Dropped while held: its contender key would keep every writer behind it waiting
    // until the session ends. It is deleted in the background.
    ~rw_lease_state() {
        if (!released && !lost)
            leave_for_good(recipe, session, contender_key);
    }

    void start_wait_lost(std::shared_ptr<grant_state> self,
                         asio::any_completion_handler<void(error_code)> h) override;
    void start_release(std::shared_ptr<grant_state> self,
                       asio::any_completion_handler<void(error_code)> h) override;

    std::string contender_key;
    rw_mode mode;
    /// A change of mode whose outcome is unknown (no answer): mode and token are read back
    /// from the contender key before the next one.
    bool reconcile = false;
    /// ModifyIndex of the contender key as this grant last wrote it (its acquire, an upgrade,
    /// a downgrade): the index a change of mode checks.
    std::uint64_t written_index() const noexcept { return token.modify_index; }
};

struct rw_lease_factory {
    static read_write_lease make(std::shared_ptr<rw_lease_state> s) {
        return read_write_lease{std::move(s)};
    }
};

} // namespace conclave::detail
