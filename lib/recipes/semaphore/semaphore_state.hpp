// SPDX-License-Identifier: BSL-1.0
// State of a semaphore object and of its permits, and what the prefix says about them.
#pragma once

#include "recipes/common/cas_race_backoff.hpp"
#include "recipes/common/grant.hpp"
#include "recipes/semaphore/semaphore_hub.hpp"
#include "recipes/semaphore/semaphore_record.hpp"

#include <conclave/semaphore.hpp>

#include <random>

namespace conclave::detail {

struct semaphore_state {
    semaphore_state(client c, std::string p, std::uint32_t l, semaphore_options o)
        : consul(std::move(c))
        , prefix(std::move(p))
        , limit(l)
        , opts(std::move(o))
        , lock_key(join_key(prefix, ".lock"))
        , hub(semaphore_hub::of(consul, prefix,
                                semaphore_hub::settings{opts.wait, opts.monitor_retry_wait})) {}
    ~semaphore_state() { shared_query::let_go(hub); }
    semaphore_state(const semaphore_state&) = delete;
    semaphore_state& operator=(const semaphore_state&) = delete;

    std::string contender_key(const std::string& session) const {
        return join_key(prefix, session);
    }

    client consul;
    std::string prefix;
    std::uint32_t limit;
    semaphore_options opts;
    std::string lock_key;
    /// Shared with every semaphore on this prefix of this client: the prefix's state, one
    /// blocking query, the queue of local waiters.
    std::shared_ptr<semaphore_hub> hub;
};

struct permit_state : grant_of<semaphore_state> {
    permit_state(std::shared_ptr<semaphore_state> sem, std::shared_ptr<session_state> s,
                 fencing_token t, std::uint32_t n)
        : grant_of(std::move(sem), std::move(s), std::move(t), hold_kind::semaphore)
        , slots(n) {}
    ~permit_state() {
        auto& hub = *recipe->hub;
        const auto it = hub.local_permits.find(token.session);
        if (it != hub.local_permits.end() && it->second.expired())
            hub.local_permits.erase(it); // (not when a later permit of the session took it)
        // Dropped while held: an acquire with the same session waiting for this permit to
        // end may now take its slot over.
        if (!released && !lost)
            hub.permit_dropped(token.session);
    }

    /// How many of the semaphore's slots it holds (its weight in `.lock`).
    const std::uint32_t slots;

    void start_wait_lost(std::shared_ptr<grant_state> self,
                         asio::any_completion_handler<void(error_code)> h) override;
    void start_release(std::shared_ptr<grant_state> self,
                       asio::any_completion_handler<void(error_code)> h) override;
};

struct permit_factory {
    static permit make(std::shared_ptr<permit_state> s) { return permit{std::move(s)}; }
};

/// What the prefix says about the semaphore.
struct semaphore_reading {
    error_code ec;                       ///< conflict (foreign flags), bad_response, limit_conflict
    semaphore_record record;             ///< live holders only (dead ones pruned)
    std::uint64_t lock_modify_index = 0; ///< 0: no `.lock` yet
};

/// Reads `.lock` (`lock`, may be null) against the keys under the prefix. A limit conflict
/// is described in `diag` when given.
semaphore_reading interpret(const semaphore_state& sem, const kv_entry* lock,
                            const std::vector<kv_entry>& entries, diagnostics* diag);

/// semaphore::async_status's answer from a reading without error (`r`, of `entries`, the keys
/// under `prefix`): the live holders with their contender keys' values (none when a holder
/// has no key of that name), and the free slots of `limit`, never below 0. Apart from the
/// read (semaphore_query.cpp) so that unit tests reach it without a server.
semaphore_status status_of(std::uint32_t limit, std::string_view prefix, const semaphore_reading& r,
                           const std::vector<kv_entry>& entries);

} // namespace conclave::detail
