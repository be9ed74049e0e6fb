// SPDX-License-Identifier: BSL-1.0
// State of a lock object and of its leases.
#pragma once

#include "recipes/common/grant.hpp"
#include "recipes/lock/key_hub.hpp"

#include <conclave/lock.hpp>

#include <optional>

namespace conclave::detail {

struct lock_state {
    lock_state(client c, std::string k, lock_options o)
        : consul(std::move(c))
        , key(std::move(k))
        , opts(std::move(o))
        , hub(key_hub::of(consul, key,
                          key_hub::settings{opts.wait, opts.monitor_retry_wait, opts.fair})) {}
    ~lock_state() { shared_query::let_go(hub); }
    lock_state(const lock_state&) = delete;
    lock_state& operator=(const lock_state&) = delete;

    client consul;
    std::string key;
    lock_options opts;
    /// Shared with every lock on this key of this client: the key's state, one blocking
    /// query, the queue of local waiters.
    std::shared_ptr<key_hub> hub;
};

struct lease_state : grant_state {
    lease_state(std::shared_ptr<lock_state> l, std::shared_ptr<session_state> s, fencing_token t)
        : grant_state(std::move(s), std::move(t))
        , lock(std::move(l)) {}
    // Dropped while held: a local acquire with the same session waiting for this grant
    // to end may now take the key over.
    ~lease_state() {
        if (!released && !lost)
            lock->hub->poke();
    }

    asio::any_io_executor executor() const override { return lock->consul.get_executor(); }
    void start_wait_lost(std::shared_ptr<grant_state> self,
                         asio::any_completion_handler<void(error_code)> h) override;
    void start_release(std::shared_ptr<grant_state> self,
                       asio::any_completion_handler<void(error_code)> h) override;

    std::shared_ptr<lock_state> lock;
};

} // namespace conclave::detail
