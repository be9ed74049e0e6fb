// SPDX-License-Identifier: BSL-1.0
// State of a multi_lock and of its grants. Each key is watched through the key's hub, the
// one a conclave::lock on that key uses in this process: one blocking query per key however
// many locks and multi-locks read it, and each sees the others' transactions.
#pragma once

#include "recipes/common/grant.hpp"
#include "recipes/lock/key_hub.hpp"

#include <conclave/multi_lock.hpp>

#include <memory>
#include <string>
#include <vector>

namespace conclave::detail {

struct multi_lock_state {
    multi_lock_state(client c, std::vector<std::string> k, multi_lock_options o)
        : consul(std::move(c))
        , keys(std::move(k))
        , opts(std::move(o)) {
        hubs.reserve(keys.size());
        for (const auto& key : keys)
            hubs.push_back(key_hub::of(
                consul, key, key_hub::settings{opts.wait, opts.monitor_retry_wait, false}));
    }
    ~multi_lock_state() {
        for (auto& h : hubs)
            shared_query::let_go(h);
    }
    multi_lock_state(const multi_lock_state&) = delete;
    multi_lock_state& operator=(const multi_lock_state&) = delete;

    /// Wakes whoever waits on any of the keys, through any of their hubs here.
    void poke_all() {
        for (auto& h : hubs)
            h->holder->poke_all();
    }
    /// Our view of every key is out of date: each is read again.
    void forget_all() {
        for (auto& h : hubs)
            h->forget();
    }

    client consul;
    std::vector<std::string> keys; ///< sorted, distinct
    multi_lock_options opts;
    std::vector<std::shared_ptr<key_hub>> hubs; ///< hubs[i] watches keys[i]
};

struct multi_lease_state : grant_of<multi_lock_state> {
    multi_lease_state(std::shared_ptr<multi_lock_state> m, std::shared_ptr<session_state> s,
                      fencing_token t)
        : grant_of(std::move(m), std::move(s), std::move(t), hold_kind::multi_lock) {}
    // Dropped while held: a local acquire with the same session waiting for this grant to
    // end may now take the keys over.
    ~multi_lease_state() {
        if (!released && !lost)
            recipe->poke_all();
    }

    void start_wait_lost(std::shared_ptr<grant_state> self,
                         asio::any_completion_handler<void(error_code)> h) override;
    void start_release(std::shared_ptr<grant_state> self,
                       asio::any_completion_handler<void(error_code)> h) override;
};

struct multi_lease_factory {
    static multi_lock_lease make(std::shared_ptr<multi_lease_state> s) {
        return multi_lock_lease{std::move(s)};
    }
};

} // namespace conclave::detail
