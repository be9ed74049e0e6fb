// SPDX-License-Identifier: BSL-1.0
// semaphore: the acquire loop (contender key, then a place in the prefix's hub: only the
// front waiter tries, adding as many queued local waiters as fit in one CAS on `.lock`),
// permit monitoring through the hub's shared query, try-acquire with one budget, destroy.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "observe/report.hpp"
#include "recipes/common/acquire_driver.hpp"
#include "recipes/common/acquire_end.hpp"
#include "recipes/common/acquire_fsm.hpp"
#include "recipes/common/acquire_policy.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/common/grant_loss_wait.hpp"
#include "recipes/common/health_wait.hpp"
#include "recipes/semaphore/semaphore_handoff.hpp"
#include "recipes/semaphore/semaphore_release.hpp"
#include "recipes/semaphore/semaphore_state.hpp"

#include <conclave/semaphore.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

namespace conclave {

using namespace detail;
using phase = semaphore_waiter::phase;

namespace {

// The waiter's place in the hub's queue (arrival order), left on every exit path.
struct queue_place {
    semaphore_hub& hub;
    std::shared_ptr<semaphore_waiter> me;
    std::list<std::shared_ptr<semaphore_waiter>>::iterator it;
    bool in_queue = true;
    queue_place(semaphore_hub& h, std::shared_ptr<semaphore_waiter> w)
        : hub(h)
        , me(std::move(w))
        , it(hub.queue.insert(hub.queue.end(), me)) {}
    ~queue_place() { leave(); }
    queue_place(const queue_place&) = delete;
    queue_place& operator=(const queue_place&) = delete;

    /// Out of the queue: nobody adds it to the holders any more, the next waiter moves up.
    void leave() {
        me->leaving = true;
        if (!in_queue)
            return;
        in_queue = false;
        hub.queue.erase(it);
        hub.poke();
    }
    bool at_front() const { return in_queue && hub.queue.front() == me; }
};

// Waits until something this waiter may act on changes: its own notifier (reaching the
// front, handed a slot), the hub's state when at the front (or when a transaction of
// unknown outcome may have added it, or its session's permit was dropped), the session, or
// `until`.
asio::awaitable<void> wait_for_change(const queue_place& place, session_state& s,
                                      clock::time_point until) {
    if (place.at_front() || place.me->was_handed || place.me->recheck)
        co_await detail::notifier::wait_any(until, place.me->wake, place.hub.changed, s.changed);
    else
        co_await detail::notifier::wait_any(until, place.me->wake, s.changed);
}

// How many slots `r` says `session` holds (0: not among the live holders, or `r` failed).
std::uint32_t slots_held(const detail::semaphore_reading& r, const std::string& session) {
    const auto it = r.record.holders.find(session);
    return r.ec || it == r.record.holders.end() ? 0 : it->second;
}

permit make_permit(std::shared_ptr<semaphore_state> sem, std::shared_ptr<session_state> s,
                   std::uint64_t lock_modify_index, std::uint32_t slots) {
    fencing_token t{sem->lock_key, s->id, 0, lock_modify_index};
    auto& hub = *sem->hub;
    auto state = std::make_shared<permit_state>(std::move(sem), std::move(s), std::move(t), slots);
    hub.local_permits[state->token.session] = state;
    return detail::permit_factory::make(std::move(state));
}

asio::awaitable<error_code> delete_contender(std::shared_ptr<semaphore_state> sem,
                                             std::string session, clock::time_point deadline) {
    // A bound through the request itself, not a racing timer: a write that was sent is
    // finished before a cancellation is reported (see client::send), a timeout is not.
    auto [ec, ok] = co_await detail::call(
        sem->consul,
        detail::endpoint::kv_delete{sem->contender_key(session),
                                    kv_delete_options{}.with_timeout(detail::time_left(deadline))});
    (void)ok;
    co_return ec;
}

// Writes the contender key (held by the session): it keeps us "alive" in the eyes of other
// holders, and lets others add us to the holders. Consul answers an acquire for a session
// it does not know with a 500 ("invalid session"): that is the session's end, not a
// failure worth another try.
asio::awaitable<error_code> write_contender(semaphore_state& sem, session_state& s,
                                            const deadline_t& deadline, diagnostics* diag) {
    diagnostics said;
    auto options = kv_put_options{}.with_acquire(s.id).with_flags(semaphore_flag_value);
    options.diag = &said;
    // The one write a spent budget still allows gets a little time, as an attempt does (a
    // budget of 0 would otherwise leave it 1 ms: never enough on a cluster).
    if (deadline)
        options.with_timeout(detail::time_left(*detail::attempt_deadline(deadline)));
    auto [ec, made] = co_await detail::call(
        sem.consul, detail::endpoint::kv_put{sem.contender_key(s.id), sem.opts.value, options});
    if (diag)
        *diag = said;
    if (ec == errc::server_error &&
        said.server_message.find("invalid session") != std::string::npos) {
        s.gone_on_server = true;
        s.mark_lost(make_error_code(errc::session_invalidated));
        co_return s.lost;
    }
    if (ec)
        co_return ec;
    co_return made ? error_code{} : make_error_code(errc::conflict);
}

// The contender key's write, tried again while Consul cannot take it (unreachable, or
// electing a leader: 500s) until the budget ends. Trying again is safe: our own session
// re-acquiring its key changes nothing, and the cleanup deletes the key if we give up.
asio::awaitable<error_code> enter_contenders(semaphore_state& sem, session_state& s,
                                             const deadline_t& deadline, diagnostics* diag) {
    detail::retry_backoff backoff;
    for (;;) {
        auto ec = co_await write_contender(sem, s, deadline, diag);
        if (ec && s.check(clock::now()))
            co_return s.lost; // the session ended meanwhile: that is the news
        if (!ec || !is_retryable(ec) || detail::past(deadline))
            co_return ec;
        co_await detail::sleep_for(backoff.next(), deadline);
        if (detail::past(deadline))
            co_return ec;
    }
}

using acquire_result = std::pair<error_code, std::optional<permit>>;

// Dead contender keys under the prefix (detail::dead_contenders) for an acquire's
// transaction on `.lock` to delete, each by check-and-set at the ModifyIndex read: a key
// written since (by anyone) fails the transaction, which is then tried again like after a
// lost CAS race, on a fresh read. None once Consul's ACLs refused such a delete.
std::vector<detail::dead_contender> dead_keys(const semaphore_hub& hub) {
    if (hub.sweep_denied)
        return {};
    return detail::dead_contenders(hub.prefix, hub.entries());
}

std::string above_limit(std::uint32_t slots, std::uint32_t limit) {
    return "a semaphore acquire of " + std::to_string(slots) + " slots, above its limit of " +
           std::to_string(limit);
}

// What the front waiter would write: the holder record read, whether it adds us, and the
// queued local waiters behind us that fit in the same check-and-set.
struct attempt_plan {
    detail::semaphore_reading reading;
    bool take = false;
    std::uint32_t slots = 1; // how many we ask for
    handoff_batch::waiters members;
    bool was_handed = false; // the slot found ours came from a transaction of unknown outcome
};

// Fair mode: whether the waiter `me` still leaves the free slots to `first` (the first in
// line, not us). Its patience runs from when it first saw these ones before it: it restarts
// when the line moves, not when anything else under the prefix changes.
bool deferring(semaphore_waiter& me, const std::vector<std::string>& first, clock::time_point now,
               std::chrono::milliseconds patience) {
    if (!me.deferring_since || me.deferring_to != first) {
        me.deferring_since = now;
        me.deferring_to = first;
    }
    return now < *me.deferring_since + patience;
}

// What the hub, our place in its queue and the session say now, for the acquire machine;
// `plan` gets what an attempt would write.
detail::acquire_view view_of(semaphore_state& sem, const queue_place& place, session_state& s,
                             diagnostics* diag, attempt_plan& plan) {
    auto& hub = *sem.hub;
    auto& me = *place.me;
    plan = attempt_plan{};
    plan.slots = me.slots;
    detail::acquire_view v;
    v.now = clock::now();
    v.session_lost = s.check(v.now);
    v.session_deadline = s.policy.deadline();
    v.granted_here = me.state == phase::granted; // someone else's transaction added us
    v.read_refused = static_cast<bool>(hub.refusal());
    v.read_failing = hub.failures() > 0;
    v.verdict_pending = me.state == phase::handing;
    v.state_index = hub.state_index();
    if (!hub.known()) {
        v.key = detail::key_state::unknown;
        return v;
    }
    const bool settled = me.state == phase::waiting && hub.attempts_in_flight == 0;
    bool left_to_us = false; // our session holds slots with no permit left, not our count
    // `.lock` as judged for the check below: the plan's reading too, unless it failed (the
    // plan's own judgement then says why in `diag`).
    std::optional<detail::semaphore_reading> judged;
    if (settled && (me.was_handed || me.recheck || !me.checked_left_slots)) {
        // A transaction whose outcome we could not know may have added us after all, or our
        // session's permit was dropped (now, or before we came): slots our session holds
        // with no permit of ours left are this acquire's, without a write, when they are as
        // many as it asks for; otherwise it cuts them down to its count or gives them back
        // below. Not only at the front: a waiter before us may wait for those slots.
        me.recheck = false;
        me.checked_left_slots = true;
        judged = detail::interpret(sem, hub.lock_entry(), hub.entries(), nullptr);
        if (const auto held = slots_held(*judged, s.id)) {
            if (!hub.slot_busy(s.id)) {
                if (held == me.slots) {
                    plan.was_handed = me.was_handed;
                    v.key = detail::key_state::ours;
                    return v;
                }
                left_to_us = true;
            } else if (hub.held_here_by(s.id)) {
                me.was_handed = false; // that slot is the permit's, not ours to leave
            }
        }
    }
    // Pending local releases go first: they hand their slots to the front anyway.
    if (!place.at_front() && !left_to_us) {
        v.key = detail::key_state::not_our_turn;
        return v;
    }
    if (!settled || !hub.releases.empty()) {
        v.key = detail::key_state::busy;
        return v;
    }
    plan.reading = judged && !judged->ec
                       ? std::move(*judged)
                       : detail::interpret(sem, hub.lock_entry(), hub.entries(), diag);
    const auto& r = plan.reading;
    if (r.ec) {
        v.key = detail::key_state::refused;
        v.refused_ec = r.ec;
        return v;
    }
    if (me.slots > r.record.limit_slots()) {
        // A resizable semaphore's limit, read from `.lock`, is below what we ask for.
        if (diag)
            diag->client_message = above_limit(me.slots, r.record.limit_slots());
        v.key = detail::key_state::refused;
        v.refused_ec = make_error_code(errc::invalid_argument);
        return v;
    }
    const auto listed = r.record.holders.find(s.id);
    const bool left_here = listed != r.record.holders.end() && !hub.slot_busy(s.id);
    if (left_here && listed->second == me.slots) {
        // Already a holder with no permit of ours left (an earlier attempt of ours was
        // applied, or a permit of this session was dropped unreleased).
        v.key = detail::key_state::ours;
        return v;
    }
    if (left_here) {
        // Our session's slots with no permit left, but not as many as we ask for: more are
        // cut down to our count (taken, nobody loses), fewer are given back, for those
        // before us, and we wait in line.
        plan.take = listed->second > me.slots;
        if (!plan.take)
            plan.reading.record.holders.erase(s.id);
        v.key = detail::key_state::free;
        v.attempt_is_ours = plan.take;
        return v;
    }
    if (!place.at_front()) {
        v.key = detail::key_state::not_our_turn;
        return v;
    }
    // One entry per session: while a local permit (or a grant under way) of our session
    // holds its slots, or a cleanup takes the session out, we wait for that to end. Its
    // release hands the slots to us, or its end wakes us. The waiters behind us may take
    // free slots meanwhile. (A permit of ours whose session is not listed was lost: we take
    // slots, and it is marked so.)
    plan.take = listed == r.record.holders.end() && !hub.clearing.count(s.id);
    const auto& others = r.record;
    // Free slots: ours, and as many as the queued local waiters ask for, in one CAS. When we
    // do not fit, nobody behind us here takes the free ones either (first come, first
    // served): the hub's query tells us when more are free.
    const auto free = others.free();
    if (free == 0 || (plan.take && free < me.slots)) {
        v.key = detail::key_state::held_elsewhere;
        return v;
    }
    if (sem.opts.fair) {
        // Only the first in line, here or elsewhere, may take the free slots. Judged once a
        // read of the prefix has our contender key: that read has every key before ours.
        // (Only reads add contender keys to the view, and a key written anew leaves it.)
        const auto mine = sem.contender_key(s.id);
        const auto& entries = hub.entries();
        if (plan.take && std::none_of(entries.begin(), entries.end(),
                                      [&](const kv_entry& e) { return e.key == mine; })) {
            v.key = detail::key_state::busy; // the prefix's query brings it
            return v;
        }
        const auto first =
            detail::first_in_line(sem.prefix, entries, others, free,
                                  [&](const std::string& id) { return hub.slots_asked(id); });
        const bool ours = std::find(first.begin(), first.end(), s.id) != first.end();
        plan.members = detail::next_in_line(hub, r.record.limit_slots(), r.record, s.id,
                                            plan.take && ours ? free - me.slots : free, {}, &first);
        if (plan.take && !ours) {
            if (!plan.members.empty()) {
                plan.take = false; // the waiters here before us take them
            } else if (deferring(me, first, v.now, sem.opts.fair_patience)) {
                // Left to the contenders before us, in other processes.
                v.key = detail::key_state::others_first;
                v.yield_until = *me.deferring_since + sem.opts.fair_patience;
                return v;
            }
        }
    } else {
        plan.members = detail::next_in_line(hub, r.record.limit_slots(), r.record, s.id,
                                            plan.take ? free - me.slots : free);
    }
    if (!plan.take && plan.members.empty()) {
        v.key = detail::key_state::held_here;
        return v;
    }
    v.key = detail::key_state::free;
    v.attempt_is_ours = plan.take;
    return v;
}

// One attempt, for the acquire machine: a check-and-set of `.lock` that adds us (when the
// plan takes a slot) and the queued local waiters that fit, and deletes dead contenders'
// keys. Its outcome, none when cancelled; a committed one that adds us makes the permit (in
// `result`). `lost_race`: whether Consul refused it (the view was out of date).
asio::awaitable<std::optional<detail::attempt_outcome>>
attempt(const std::shared_ptr<semaphore_state>& sem, const std::shared_ptr<session_state>& s,
        attempt_plan& plan, const deadline_t& deadline, acquire_result& result, bool& lost_race) {
    auto& hub = *sem->hub;
    auto record = plan.reading.record;
    std::vector<std::string> added;
    if (plan.take) {
        added.push_back(s->id);
        record.holders[s->id] = plan.slots;
    }
    for (const auto& w : plan.members) {
        added.push_back(w->session->id);
        record.holders[w->session->id] = w->slots;
    }
    std::vector<txn_op> ops{txn_op::cas(sem->lock_key, record.encode(),
                                        plan.reading.lock_modify_index, semaphore_flag_value)};
    // The contender keys of crashed contenders go in the same transaction: their sessions
    // ended, and Consul only released their keys (behavior "release").
    std::vector<std::string> swept;
    for (const auto& d : dead_keys(hub)) {
        ops.push_back(txn_op::remove_cas(d.key, d.modify_index));
        swept.push_back(d.key);
    }
    ops.push_back(txn_op::get(sem->lock_key)); // (deletes have no result)
    std::pair<error_code, txn_result> outcome;
    {
        handoff_batch batch{sem->hub, std::move(plan.members), sem->limit,
                            sem->opts.cleanup_timeout};
        outcome = co_await detail::call(sem->consul, detail::endpoint::txn{std::move(ops), {}},
                                        detail::attempt_deadline(deadline));
        auto& [tec, t] = outcome;
        if (!tec && t.committed && !t.results.empty())
            batch.granted(t.results.back().modify_index);
        else if (!tec)
            batch.refused();
    }
    auto& [tec, t] = outcome;
    if (tec == asio::error::operation_aborted)
        co_return std::nullopt;
    detail::attempt_outcome o{tec, !tec && t.committed && !t.results.empty(),
                              detail::classify_refusal(t.errors)};
    lost_race = !tec && !o.committed;
    if (o.committed) {
        hub.saw_write(t.results.back(), plan.reading.lock_modify_index, added, "", swept);
        if (plan.take) {
            if (auto lost = hub.permit_here(s->id))
                lost->mark_lost(make_error_code(errc::lock_lost));
            result.second = make_permit(sem, s, t.results.back().modify_index, plan.slots);
        }
    } else if (!tec && o.why == detail::refusal::denied && !swept.empty()) {
        hub.sweep_denied = true; // perhaps only the deletes were denied
        o.denied_extras = true;
    }
    co_return o;
}

// An acquire of `slots` slots that cannot be granted as asked: none, more than the limit,
// or (re-entrant) more than the permit its session holds here. Sends nothing.
error_code check_slots_asked(const semaphore_state& sem, const semaphore_hub& hub,
                             const std::string& session, std::uint32_t slots, diagnostics* diag) {
    std::string why;
    if (slots == 0)
        why = "a semaphore acquire of 0 slots";
    else if (slots > sem.limit && !sem.opts.resizable) // (else: against `.lock`'s, once read)
        why = above_limit(slots, sem.limit);
    else if (auto here = hub.permit_here(session); here && sem.opts.reentrant) {
        if (const auto held = static_cast<permit_state&>(*here).slots; held < slots)
            why = "a re-entrant semaphore acquire of " + std::to_string(slots) +
                  " slots with a session whose permit holds " + std::to_string(held);
    }
    if (why.empty())
        return {};
    if (diag)
        diag->client_message = why;
    return make_error_code(errc::invalid_argument);
}

// The acquire loop. Local waiters on a prefix queue in its hub: only the one at the front
// tries, adding as many queued local waiters as there are free slots to the same CAS; the
// others sleep until they reach the front or are handed a slot (by that CAS, or by a local
// release). The prefix's state comes from the hub's shared query; the decisions are the
// acquire machine's (recipes/common/acquire_fsm.hpp).
asio::awaitable<acquire_result> acquire_loop(std::shared_ptr<semaphore_state> sem,
                                             std::shared_ptr<session_state> s, deadline_t deadline,
                                             diagnostics* diag, std::uint32_t slots) {
    auto& hub = *sem->hub;
    if (auto refused = check_slots_asked(*sem, hub, s->id, slots, diag))
        co_return acquire_result{refused, std::nullopt};
    auto held =
        sem->opts.reentrant ? join_if_held<permit_state>(hub.permit_here(s->id), s->id) : nullptr;
    if (held)
        co_return acquire_result{error_code{}, detail::permit_factory::make(std::move(held))};
    detail::acquire_report report{sem->consul, grant_kind::semaphore, sem->prefix};
    auto how = acquire_outcome::taken; // how a permit was granted
    queue_place place{
        hub, std::make_shared<semaphore_waiter>(s, sem->opts.resizable ? 0 : sem->limit, slots)};
    auto& me = *place.me;
    auto subscription = hub.subscribe();
    acquire_result result;
    bool contender_sent = false;
    bool cancelled = false;
    detail::acquire_fsm fsm{deadline, detail::write_rule::shared_record};
    attempt_plan plan;
    bool lost_race = false; // the last attempt was refused: the view is out of date
    try {
        // A cleanup deleting our session's contender key (a release, an acquire giving up)
        // could delete it after we wrote it: wait for it to end.
        while (hub.clearing.count(s->id) && !detail::past(deadline) && !s->check(clock::now()))
            co_await detail::notifier::wait_any(deadline ? std::min(*deadline, s->policy.deadline())
                                                         : s->policy.deadline(),
                                                hub.changed, s->changed);
        if (s->check(clock::now())) {
            result.first = s->lost;
        } else if (!hub.clearing.count(s->id)) {
            contender_sent = true;
            auto pec = co_await enter_contenders(*sem, *s, deadline, diag);
            if (pec) {
                if (!detail::past(deadline))
                    result.first = pec;
            } else {
                me.enqueued = true;
                hub.poke(); // a local release may hand us its slot from now on
            }
        }
        using kind = detail::acquire_action::kind;
        auto action = detail::acquire_action(kind::finish);
        action.end = detail::acquire_end::timed_out; // (not in line: result.first says why)
        if (me.enqueued)
            action = fsm.next(view_of(*sem, place, *s, diag, plan));
        action = co_await detail::drive_acquire(
            fsm, deadline, action, [&] { return view_of(*sem, place, *s, diag, plan); },
            [&](clock::time_point until) { return wait_for_change(place, *s, until); },
            [&] { return attempt(sem, s, plan, deadline, result, lost_race); },
            [&] {
                if (std::exchange(lost_race, false))
                    hub.outdated(); // (its read in flight is answered at once)
                else
                    hub.forget();
            });
        using end = detail::acquire_end;
        switch (action.end) {
        case end::handed_here:
        case end::handed_remote:
            how = acquire_outcome::handed_over;
            result.second = make_permit(sem, s, me.granted_index, slots);
            break;
        case end::already_held:
            how = plan.was_handed ? acquire_outcome::handed_over : acquire_outcome::already_held;
            result.second = make_permit(sem, s, hub.lock_entry()->modify_index, slots);
            break;
        case end::taken:
            break; // (the permit was made with the attempt's answer)
        case end::cancelled:
            cancelled = true;
            break;
        default: // failed, denied, out of time (not a contender: result.first says why)
            if (!result.first)
                result.first = detail::error_of(action, *s, hub, sem->lock_key, diag);
        }
    } catch (const boost::system::system_error& e) {
        if (e.code() != asio::error::operation_aborted)
            throw;
        cancelled = true;
    }
    bool maybe_holder = fsm.maybe_holding() && !result.second;
    if (!result.second) {
        // No permit: leave no trace (holder entry, contender key), bounded.
        place.leave();
        co_await asio::this_coro::throw_if_cancelled(false);
        co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
        const auto until = clock::now() + sem->opts.cleanup_timeout;
        // Someone's transaction is adding us: wait for its verdict (it is bounded too).
        while (me.state == phase::handing && clock::now() < until)
            co_await me.wake.wait(until);
        if (me.state == phase::handing)
            me.orphaned = true; // no verdict in time: its sender undoes a commit
        if (me.state == phase::granted || me.was_handed)
            maybe_holder = true;
        if (maybe_holder)
            co_await detail::leave_holders(sem->hub, sem->limit, s->id, until);
        // The contender key is also that of every local acquire with our session: left to
        // its permit, or to a waiter of our session.
        if (contender_sent && !hub.held_here_by(s->id) && !hub.waits_here(s->id)) {
            const detail::clearing_scope clearing{hub, s->id};
            co_await delete_contender(sem, s->id, until);
        }
    }
    co_return detail::finish_acquire(report, std::move(result), cancelled, how);
}

// The acquire loop of `slots` slots, as start_acquire calls it.
auto acquire_of(std::uint32_t slots) {
    return [slots](std::shared_ptr<semaphore_state> sem, std::shared_ptr<session_state> s,
                   deadline_t deadline, diagnostics* diag) {
        return acquire_loop(std::move(sem), std::move(s), deadline, diag, slots);
    };
}

// Watches the permit through the hub's shared query: lost when our session leaves the
// holders (removed, or pruned because our contender key vanished), when `.lock` conflicts,
// or when the query failed more than monitor_retries times in a row.
asio::awaitable<error_code> destroy(std::shared_ptr<semaphore_state> sem) {
    auto [ec, list] = co_await detail::call(
        sem->consul, detail::endpoint::kv_list{detail::join_key(sem->prefix, ""), query_options{}});
    if (ec)
        co_return ec;
    const kv_entry* lock = nullptr;
    for (const auto& e : list.entries)
        if (e.key == sem->lock_key)
            lock = &e;
    if (!lock)
        co_return error_code{};
    auto r = detail::interpret(*sem, lock, list.entries, nullptr);
    if (r.ec)
        co_return r.ec;
    if (!r.record.holders.empty())
        co_return make_error_code(errc::conflict); // Go: ErrSemaphoreInUse
    auto [dec, deleted] = co_await detail::call(
        sem->consul, detail::endpoint::kv_delete{
                         sem->lock_key, kv_delete_options{}.with_cas(r.lock_modify_index)});
    if (dec)
        co_return dec;
    co_return deleted ? error_code{} : make_error_code(errc::conflict);
}

} // namespace

semaphore::semaphore(client& c, std::string prefix, std::uint32_t limit, semaphore_options opts)
    : state_(std::make_shared<semaphore_state>(c, std::move(prefix), limit, std::move(opts))) {
    if (limit == 0)
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "semaphore limit must be positive");
}

const std::string& semaphore::prefix() const noexcept {
    return state_->prefix;
}
std::uint32_t semaphore::limit() const noexcept {
    return state_->limit;
}

void semaphore::acquire_impl(state_ptr sem, session_ptr s, std::uint32_t slots,
                             detail::diagnostics_route* route,
                             asio::any_completion_handler<void(error_code, permit)> h) {
    auto* fallback = sem->opts.diag; // (read before sem is moved)
    detail::start_acquire(acquire_of(slots), std::move(sem), std::move(s), std::nullopt, route,
                          fallback, "semaphore acquire with an empty conclave::session",
                          std::move(h));
}

void semaphore::try_acquire_impl(
    state_ptr sem, session_ptr s, std::uint32_t slots, std::chrono::milliseconds budget,
    detail::diagnostics_route* route,
    asio::any_completion_handler<void(error_code, std::optional<permit>)> h) {
    auto* fallback = sem->opts.diag; // (read before sem is moved)
    detail::start_acquire(acquire_of(slots), std::move(sem), std::move(s), clock::now() + budget,
                          route, fallback, "semaphore acquire with an empty conclave::session",
                          std::move(h));
}

void semaphore::destroy_impl(state_ptr sem, asio::any_completion_handler<void(error_code)> h) {
    auto ex = sem->consul.get_executor();
    detail::spawn_op(ex, destroy(std::move(sem)), std::move(h));
}

} // namespace conclave
