// State of a lock object and of its leases.
#pragma once

#include "recipes/grant.hpp"

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

struct lease_state : grant_state {
    lease_state(std::shared_ptr<lock_state> l, std::shared_ptr<session_state> s, fencing_token t)
        : grant_state(std::move(s), std::move(t))
        , lock(std::move(l)) {}

    std::shared_ptr<lock_state> lock;
};

} // namespace conclave::detail
