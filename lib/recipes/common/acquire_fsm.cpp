// SPDX-License-Identifier: BSL-1.0
// The acquire loop's decisions (acquire_fsm.hpp says which, and in what order).
#include "recipes/common/acquire_fsm.hpp"

#include <algorithm>

namespace conclave::detail {

acquire_action acquire_fsm::next(const acquire_view& v) {
    if (v.granted_here)
        return finish(acquire_end::handed_here);
    if (v.session_lost)
        return finish(acquire_end::failed); // the driver gives the session's loss reason
    if (v.read_refused)
        return finish(acquire_end::read_denied);
    // A budget (even 0) allows one look at the key: give up once it has been seen taken or
    // an attempt failed, or when Consul cannot be read at all.
    if (past(v.now) && !v.verdict_pending && (looked_ || v.read_failing))
        return finish(acquire_end::timed_out);
    if (v.granted_by_other)
        return finish(acquire_end::handed_remote);

    switch (v.key) {
    case key_state::unknown:
        return wait(wake_by(v));
    case key_state::not_our_turn:
        looked_ = true; // taken, or local waiters are ahead of us
        return wait(wake_by(v));
    case key_state::busy:
        return wait(wake_by(v));
    case key_state::refused:
        return finish(acquire_end::failed, v.refused_ec);
    case key_state::conflict:
        // Judged on a fresh read only: a view shared with other objects may predate the
        // key's delete.
        if (!std::exchange(conflict_reread_, true))
            return acquire_action{acquire_action::kind::reread};
        return finish(acquire_end::failed, make_error_code(errc::conflict));
    case key_state::held_here:
        // Not a second holder: the local grant's release hands the key to us (one
        // transaction), or its end (lost, dropped) wakes us.
        looked_ = true;
        return wait(wake_by(v));
    case key_state::ours:
        return finish(acquire_end::already_held);
    case key_state::held_elsewhere:
        looked_ = true; // the hub's query tells us when it changes
        return wait(wake_by(v));
    case key_state::others_turn:
        // Leave the key to another process for a moment, unless this acquire's budget ends
        // first (a bounded acquire is not refused a free key for the sake of turns).
        if (v.now < v.yield_until &&
            (v.yield_until == clock::time_point::max() || !deadline_ || *deadline_ > v.yield_until))
            return wait(std::min(wake_by(v), v.yield_until));
        break;
    case key_state::others_first:
        // In line: a bounded acquire ends with its budget rather than jump the line.
        looked_ = true;
        if (v.now < v.yield_until)
            return wait(std::min(wake_by(v), v.yield_until));
        break;
    case key_state::free:
        break;
    }
    attempt_is_ours_ = v.attempt_is_ours;
    attempt_basis_ = v.state_index;
    maybe_holding_ = attempt_is_ours_;
    return acquire_action{acquire_action::kind::attempt};
}

acquire_action acquire_fsm::attempted(const acquire_view& v, const attempt_outcome& o) {
    if (o.ec) {
        // Unknown outcome. Giving up: the driver's cleanup releases it if it was applied.
        // Retrying: read the key first (it may say we hold it).
        if (past(v.now) || !is_retryable(o.ec))
            return past(v.now) ? finish(acquire_end::timed_out) : finish(acquire_end::failed, o.ec);
        acquire_action a{acquire_action::kind::sleep};
        a.pause = backoff_.next();
        a.reread = true;
        return a;
    }
    maybe_holding_ = false;
    looked_ = true;
    backoff_.reset();
    return after_answer(v, o);
}

acquire_action acquire_fsm::after_answer(const acquire_view& v, const attempt_outcome& o) {
    if (o.committed)
        return attempt_is_ours_ ? finish(acquire_end::taken) : next(v); // (others granted)
    if (o.why == refusal::denied)
        return o.denied_extras ? next(v) : finish(acquire_end::write_denied);
    if (rule_ == write_rule::shared_record) {
        // Lost a check-and-set race with another participant: read again, a little later.
        acquire_action a{acquire_action::kind::sleep};
        if (!race_)
            race_.emplace();
        a.pause = race_->next();
        a.reread = true;
        return a;
    }
    switch (o.why) {
    case refusal::denied:
        break; // (above)
    case refusal::lock_delay: {
        acquire_action a{acquire_action::kind::sleep};
        a.pause = delay_backoff_.next();
        return a;
    }
    case refusal::session_gone: {
        auto a = finish(acquire_end::failed, make_error_code(errc::session_invalidated));
        a.session_gone = true;
        return a;
    }
    case refusal::held:
    case refusal::stale:
    case refusal::other:
        break;
    }
    // Held, stale or other: our view is older than the key. When the news came while the
    // attempt was out (a local write, a read), nothing will wake us for it: decide again
    // now. Else the hub's query, blocked at that view's index, returns with the news
    // (bounded, in case nothing changes).
    if (v.state_index != attempt_basis_)
        return next(v);
    return wait(std::min(wake_by(v), v.now + backoff_.next()));
}

acquire_action acquire_fsm::cancelled() {
    return finish(acquire_end::cancelled);
}

acquire_fsm::clock::time_point acquire_fsm::wake_by(const acquire_view& v) const {
    auto until = v.session_deadline;
    // Past the budget but not looked yet: wait for the hub's read, not for the budget.
    if (deadline_ && !v.verdict_pending && (looked_ || !past(v.now)))
        until = std::min(until, *deadline_);
    return until;
}

acquire_action acquire_fsm::wait(clock::time_point until) const {
    acquire_action a{acquire_action::kind::wait};
    a.until = until;
    return a;
}

acquire_action acquire_fsm::finish(acquire_end end, error_code ec) {
    acquire_action a{acquire_action::kind::finish};
    a.end = end;
    a.ec = ec;
    return a;
}

} // namespace conclave::detail
