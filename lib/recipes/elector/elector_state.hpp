// SPDX-License-Identifier: BSL-1.0
// State of an elector (its lock, its terms) and of a leader observer.
#pragma once

#include "recipes/common/notifier.hpp"

#include <conclave/elector.hpp>
#include <conclave/watch.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace conclave {

namespace detail {

struct session_state;

struct elector_state {
    elector_state(client& c, std::string k, elector_options o)
        : consul(c)
        , key(std::move(k))
        , opts(std::move(o))
        , mutex(c, key,
                lock_options{}
                    .with_value(opts.value)
                    .with_wait(opts.wait)
                    .with_monitor_retries(opts.monitor_retries, opts.monitor_retry_wait)
                    .with_cleanup_timeout(opts.cleanup_timeout)
                    .with_fair(opts.fair || !opts.preferred.empty())
                    .with_preferred(opts.preferred)) {}

    client consul;
    std::string key;
    elector_options opts;
    lock mutex;
    std::optional<lock_lease> current; ///< while leading (async_run)
    /// The session async_run campaigns with, while it runs (for elector::hand_over).
    std::shared_ptr<session_state> run_session;
    bool running = false;           ///< an async_run is active
    bool campaigning = false;       ///< an async_campaign is acquiring
    std::optional<lock_lease> term; ///< async_campaign's last term (held until released)

    /// The term this elector holds now (async_run's or async_campaign's), if any.
    std::optional<lock_lease> held_term() const {
        if (current && current->held())
            return current;
        if (term && term->held())
            return term;
        return std::nullopt;
    }
    /// An async_campaign's campaign or term is under way.
    bool campaign_busy() const { return campaigning || (term && term->held()); }
    std::uint64_t resigns = 0; ///< bumped by each async_resign
    /// The hold-off the last resign asked for, instead of opts.resign_holdoff.
    std::optional<std::chrono::milliseconds> resign_holdoff;
    notifier changed; ///< resign requested, leadership ended
};

struct observer_state {
    observer_state(client c, const std::string& key)
        : consul(c)
        , follow(std::move(c), watch::key(key)) {}
    client consul;
    watch follow;
    /// What the last call reported (outer empty: nothing reported yet).
    std::optional<std::optional<leader_info>> last;
};

} // namespace detail

} // namespace conclave
