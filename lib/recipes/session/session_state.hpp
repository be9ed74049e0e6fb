// SPDX-License-Identifier: BSL-1.0
// The state shared by every handle of a session and by the grants it backs.
#pragma once

#include "observe/report.hpp"
#include "recipes/common/notifier.hpp"
#include "recipes/session/renew_policy.hpp"

#include <conclave/session.hpp>

namespace conclave::detail {

struct session_state {
    using clock = std::chrono::steady_clock;

    session_state(client c, std::string session_id, session_config config,
                  clock::time_point created_at)
        : consul(std::move(c))
        , id(std::move(session_id))
        , cfg(std::move(config))
        , policy(cfg.ttl, created_at) {}
    ~session_state();

    session_state(const session_state&) = delete;
    session_state& operator=(const session_state&) = delete;

    /// Records the first loss and wakes everyone waiting on the session. `ended`: we ended
    /// it (destroyed, or its run cancelled), which is not reported as a loss.
    void mark_lost(error_code reason, bool ended = false) {
        if (lost)
            return;
        lost = reason;
        ended_by_us = ended;
        if (!ended)
            report_health(consul, hold_kind::session, id, hold_health::lost, reason);
        changed.notify_all();
    }

    /// session::hand_over: lost here, quietly, and nothing more written for it. False when
    /// it was lost already.
    bool hand_over() {
        if (check(clock::now()))
            return false;
        handed_over = true;
        mark_lost(make_error_code(errc::session_handed_over), true);
        return true;
    }

    /// Ended by us without a loss: destroyed, or handed over (a run then completes with
    /// success).
    bool ended_quietly() const { return destroyed || handed_over; }

    /// Marks the session lost if its local deadline has passed. True when lost.
    bool check(clock::time_point now) {
        if (!lost && policy.expired(now))
            mark_lost(make_error_code(errc::session_expired));
        return static_cast<bool>(lost);
    }

    /// Lost, in jeopardy (renewals failing or late) or held, at `now`.
    hold_health health(clock::time_point now) {
        if (check(now))
            return hold_health::lost;
        return policy.in_jeopardy(now) ? hold_health::jeopardy : hold_health::held;
    }
    /// When health() changes if nothing else happens (a renew's outcome notifies `changed`).
    clock::time_point next_health_change(clock::time_point now) const {
        if (lost)
            return clock::time_point::max();
        return policy.in_jeopardy(now) ? policy.deadline() : policy.jeopardy_at();
    }
    /// Time left before the local deadline: zero once lost.
    clock::duration remaining(clock::time_point now) {
        if (check(now))
            return clock::duration::zero();
        return policy.deadline() - now;
    }

    client consul;
    std::string id;
    session_config cfg;
    /// The TTL check the session is bound to and the library passes (empty: none).
    std::string check_id;
    bool check_deregistered = false; ///< the check's deregistration was sent
    renew_policy policy;
    error_code lost;             ///< why the session is lost (empty while it is not)
    bool destroyed = false;      ///< we destroyed it and Consul confirmed
    bool gone_on_server = false; ///< Consul said it does not know it (no destroy needed)
    bool running = false;        ///< an async_run is active
    bool in_jeopardy = false;    ///< reported in jeopardy, not yet held again
    bool destroying = false;     ///< our destroy was sent (a 404 may be its doing)
    bool ended_by_us = false;    ///< lost because we ended it: not reported as a loss
    /// The program's last session handle is gone: a run still renewing stops (as if
    /// cancelled) and destroys the session. The run itself holds no handle, only this state.
    bool abandoned = false;
    /// Handed over to a successor process (session::hand_over): nothing is written for the
    /// session or its grants any more, here.
    bool handed_over = false;
    bool resumed = false; ///< resumed rather than created
    /// Grants (lock leases, permits) of this session that may still be released: not
    /// released, not lost other than by our ending the session, not dropped. A cancelled
    /// run's destroy waits for them (see close_on_server in session.cpp).
    unsigned open_grants = 0;
    notifier changed; ///< wakes waiters on loss and on deadline changes
};

} // namespace conclave::detail
