// State of a lock object and of its leases.
#pragma once

#include "recipes/notifier.hpp"
#include "recipes/session_state.hpp"

#include <conclave/lock.hpp>

#include <optional>

namespace conclave::detail {

struct lock_state {
    lock_state(client c, std::string k, lock_options o)
        : consul(std::move(c))
        , key(std::move(k))
        , opts(std::move(o)) {}

    client consul;
    std::string key;
    lock_options opts;
    /// The key as last seen (saves a read before the next acquire): empty optional = not
    /// known; `known_absent` = seen missing.
    std::optional<kv_entry> known;
    bool known_absent = false;

    void forget() {
        known.reset();
        known_absent = false;
    }
    void saw(std::optional<kv_entry> e) {
        known_absent = !e;
        known = std::move(e);
    }
};

struct lease_state {
    lease_state(std::shared_ptr<lock_state> l, std::shared_ptr<session_state> s, fencing_token t)
        : lock(std::move(l))
        , session(std::move(s))
        , token(std::move(t)) {}

    void mark_lost(error_code reason) {
        if (lost)
            return;
        lost = reason;
        changed.notify_all();
    }

    std::shared_ptr<lock_state> lock;
    std::shared_ptr<session_state> session;
    fencing_token token;
    error_code lost;       ///< first reason the grant ended
    bool released = false; ///< released by us (Consul confirmed)
    notifier changed;
};

} // namespace conclave::detail
