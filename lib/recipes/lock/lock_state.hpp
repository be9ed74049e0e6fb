// SPDX-License-Identifier: BSL-1.0
// State of a lock object and of its leases.
#pragma once

#include "recipes/common/grant.hpp"
#include "recipes/common/keyed_state.hpp"
#include "recipes/lock/key_hub.hpp"

#include <conclave/lock.hpp>

#include <optional>

namespace conclave::detail {

struct lock_state : keyed_state<lock_options, key_hub> {
    lock_state(client c, std::string k, const lock_options& o)
        : keyed_state(std::move(c), std::move(k), o,
                      key_hub::settings{o.wait, o.monitor_retry_wait, o.fair}) {}
};

struct lease_state : grant_of<lock_state> {
    lease_state(std::shared_ptr<lock_state> l, std::shared_ptr<session_state> s, fencing_token t)
        : grant_of(std::move(l), std::move(s), std::move(t), hold_kind::lock) {}
    // Dropped while held: a local acquire with the same session waiting for this grant
    // to end may now take the key over.
    ~lease_state() {
        if (!released && !lost)
            recipe->hub->holder->poke_all();
    }

    void start_wait_lost(std::shared_ptr<grant_state> self,
                         asio::any_completion_handler<void(error_code)> h) override;
    void start_release(std::shared_ptr<grant_state> self,
                       asio::any_completion_handler<void(error_code)> h) override;
};

} // namespace conclave::detail
