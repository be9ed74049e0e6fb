// SPDX-License-Identifier: BSL-1.0
// lock: the acquire loop (one txn per attempt, waits on the key, lock-delay backoff),
// try-acquire with one budget, and destroy.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "observe/report.hpp"
#include "recipes/common/acquire_driver.hpp"
#include "recipes/common/acquire_end.hpp"
#include "recipes/common/acquire_fsm.hpp"
#include "recipes/common/acquire_policy.hpp"
#include "recipes/common/contender.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/lock/lock_release.hpp"
#include "recipes/lock/lock_state.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>

namespace conclave {

using namespace detail;

std::string fencing_token::to_string() const {
    return std::to_string(modify_index) + ":" + std::to_string(lock_index) + ":" + session + ":" +
           key;
}

namespace {

using acquire_result = std::pair<error_code, std::optional<lock_lease>>;

} // namespace

namespace detail {
struct lease_factory {
    static lock_lease make(std::shared_ptr<lease_state> s) { return lock_lease{std::move(s)}; }
};
} // namespace detail

namespace {

// Releases a lock this acquire may hold (its txn may have been applied before it was
// cancelled or timed out). Bounded; harmless if the lock is not held.
asio::awaitable<void> undo_acquire(std::shared_ptr<lock_state> l, std::string session) {
    co_await detail::release_for(l->hub, std::move(session), l->opts.value,
                                 l->opts.cleanup_timeout);
}

// Fair mode: this waiter's contender key, unique per process and waiter.
std::string contender_key_for(const detail::key_hub& hub, const std::string& session) {
    return detail::unique_contender_key(hub.queue_prefix(), session);
}

// Fair mode: writes the waiter's contender key, held by its session, and learns its
// CreateIndex (its place in line). Errors are the acquire's errors.
asio::awaitable<error_code> enqueue(detail::key_hub& hub, detail::hub_waiter& me,
                                    const deadline_t& deadline) {
    std::vector<txn_op> ops;
    // Its value is the lock's value: a holder in another process that hands this waiter
    // the key writes it (see release_lease).
    ops.push_back(txn_op::lock(me.contender_key, me.session->id, me.value, 0));
    ops.push_back(txn_op::get(me.contender_key));
    auto [ec, index] =
        co_await detail::write_contender(hub.consul, std::move(ops), *me.session, deadline);
    me.contender_index = index;
    co_return ec;
}

// Deletes the waiter's contender key (bounded; a key left by a failure ends with the
// session and is pruned by the others meanwhile). An acquire that ends without a lease
// (cancelled, timed out) may have been handed the key by a holder in another process just
// before: that handoff deleted the contender key in its own transaction, so the delete
// (checked against the key's only write: a CAS delete of a missing key "succeeds" in
// Consul) is refused, and then the key is read and released if ours.
asio::awaitable<void> dequeue(std::shared_ptr<lock_state> l, const detail::hub_waiter& me,
                              bool has_lease) {
    const auto until = clock::now() + l->opts.cleanup_timeout;
    std::vector<txn_op> ops;
    if (!has_lease)
        ops.push_back(txn_op::check_index(me.contender_key, me.contender_index));
    ops.push_back(txn_op::remove(me.contender_key));
    auto [dec, t] =
        co_await detail::call(l->consul, detail::endpoint::txn{std::move(ops), {}}, until);
    if (has_lease || (!dec && t.committed))
        co_return;
    auto [ec, r] =
        co_await detail::call(l->consul, detail::endpoint::kv_get{l->key, query_options{}}, until);
    if (ec || (r.entry && r.entry->session == me.session->id && r.entry->flags == lock_flag_value))
        co_await detail::release_for(l->hub, me.session->id, l->opts.value,
                                     l->opts.cleanup_timeout);
}

// Fair mode: whether a holder in another process handed this waiter the key (its release
// wrote the key locked by our session and deleted our contender key; see release_lease).
bool handed_by_another_process(const detail::key_hub& hub, const detail::hub_waiter& me) {
    if (!hub.fair() || !hub.known() || hub.attempt_in_flight || !hub.entry() ||
        me.contender_index == 0 || hub.state_index() < me.contender_index)
        return false;
    const kv_entry& e = *hub.entry();
    if (e.flags != lock_flag_value || e.session != me.session->id)
        return false;
    return std::none_of(hub.contenders().begin(), hub.contenders().end(),
                        [&](const kv_entry& c) { return c.key == me.contender_key; });
}

// Waits until something this waiter may act on changes (the hub's state and queue at the
// front; only reaching the front for waiters behind it, unless fair), the session, or
// `until`.
asio::awaitable<void> wait_for_change(detail::key_hub& hub, detail::hub_waiter& me,
                                      session_state& s, clock::time_point until) {
    const bool behind = !hub.fair() && !hub.queue.empty() && hub.queue.front().get() != &me;
    auto& n = behind ? me.wake : hub.changed;
    co_await detail::notifier::wait_any(until, n, s.changed);
}

// The waiter's place in the hub's queue, left on every exit path. A waiter that leaves
// while a releasing holder is handing it the key says so: that holder then undoes it.
struct queue_place {
    detail::key_hub& hub;
    std::shared_ptr<detail::hub_waiter> me;
    std::list<std::shared_ptr<detail::hub_waiter>>::iterator it;
    queue_place(detail::key_hub& h, std::shared_ptr<detail::hub_waiter> w)
        : hub(h)
        , me(std::move(w))
        , it(hub.queue.insert(hub.queue.end(), me)) {}
    ~queue_place() {
        if (me->state == detail::hub_waiter::phase::handing)
            me->state = detail::hub_waiter::phase::gone;
        hub.queue.erase(it);
        hub.poke();
    }
    queue_place(const queue_place&) = delete;
    queue_place& operator=(const queue_place&) = delete;
    // Fair mode: the oldest contender key across all processes goes first (local arrival
    // order could differ from the order Consul applied the contender writes in). Else:
    // the front of the local queue.
    bool my_turn() const {
        if (hub.attempt_in_flight || me->state != detail::hub_waiter::phase::waiting)
            return false;
        return hub.fair() ? hub.first_in_line(*me) : hub.queue.front() == me;
    }
};

lock_lease make_lease(std::shared_ptr<lock_state> l, std::shared_ptr<session_state> s,
                      const kv_entry& e) {
    fencing_token t{l->key, s->id, e.lock_index, e.modify_index};
    auto state = std::make_shared<lease_state>(l, std::move(s), std::move(t));
    l->hub->holder->grant = state;
    return detail::lease_factory::make(std::move(state));
}

// Fair mode: writes the waiter's contender key, retrying transient failures within the
// budget. Its own coroutine: a parked waiter keeps only the loop's frame.
asio::awaitable<error_code> enter_line(detail::key_hub& hub, detail::hub_waiter& me,
                                       deadline_t deadline) {
    detail::retry_backoff backoff;
    for (;;) {
        auto ec = co_await enqueue(hub, me, deadline);
        if (ec == asio::error::operation_aborted)
            co_return ec; // cancelled: never an empty "out of time"
        if (!ec || detail::past(deadline))
            co_return error_code{}; // entered, or out of time (an empty result)
        if (!is_retryable(ec))
            co_return ec;
        co_await detail::sleep_for(backoff.next(), deadline);
    }
}

// One attempt at a free key: take it in one transaction, whose answer is the fencing token.
// The check keeps the transaction from overwriting a key that changed since we looked at it
// (for instance a foreign key with other flags). In fair mode it also leaves the line.
//
// The lock operation's own result is the key after the write (Consul answers a write with
// the entry less its value), so no `get` follows it: on success the last result is the key
// as we wrote it, with our value put back.
asio::awaitable<std::pair<error_code, txn_result>>
take_free_key(lock_state& l, detail::hub_waiter& me, const kv_entry* known, deadline_t deadline) {
    std::vector<txn_op> ops;
    if (known)
        ops.push_back(txn_op::check_index(l.key, known->modify_index));
    else
        ops.push_back(txn_op::check_not_exists(l.key));
    ops.push_back(txn_op::lock(l.key, me.session->id, l.opts.value, lock_flag_value));
    if (!me.contender_key.empty())
        ops.push_back(txn_op::remove(me.contender_key));
    detail::attempt_scope attempt{*l.hub};
    auto outcome = co_await detail::call(l.consul, detail::endpoint::txn{std::move(ops), {}},
                                         detail::attempt_deadline(deadline));
    auto& results = outcome.second.results;
    if (!outcome.first && outcome.second.committed) {
        // Results come only from check-index (the key before) and the lock: the lock's is
        // at the place the check's result leaves it, and names our session.
        const std::size_t at = known ? 1 : 0;
        if (results.size() <= at || results[at].key != l.key ||
            results[at].session != me.session->id) {
            // Committed, so the key is ours, but not as Consul says it: an unknown outcome
            // (a later read, or the cleanup, settles it), never a refusal.
            outcome.first = make_error_code(errc::bad_response);
            results.clear();
        } else {
            kv_entry entry = std::move(results[at]);
            entry.value = l.opts.value;
            results.clear();
            results.push_back(std::move(entry));
        }
    }
    co_return outcome;
}

// Whether the waiter still has a contender key to delete when its acquire ends (a lease
// without a write keeps none).
bool still_in_line(const detail::hub_waiter& me) {
    return !me.contender_key.empty() && me.state != detail::hub_waiter::phase::granted;
}

// When the acquire ends: releases the key if an attempt of ours may have taken it (the
// acquire failed or was cancelled meanwhile), and leaves the fair line. Bounded; the caller
// has made it uncancellable.
asio::awaitable<void> leave_no_trace(std::shared_ptr<lock_state> l, detail::hub_waiter& me,
                                     bool maybe_holding, bool has_lease) {
    if (maybe_holding)
        co_await undo_acquire(l, me.session->id);
    if (still_in_line(me))
        co_await dequeue(l, me, has_lease);
}

// One attempt, for the acquire machine: its outcome (none when cancelled). A committed one
// makes the lease (in `result`), and tells the hub what we wrote.
asio::awaitable<std::optional<detail::attempt_outcome>>
attempt(const std::shared_ptr<lock_state>& l, const std::shared_ptr<session_state>& s,
        const queue_place& place, deadline_t deadline, acquire_result& result) {
    auto& hub = *l->hub;
    const kv_entry* known = hub.entry() ? &*hub.entry() : nullptr;
    auto [ec, t] = co_await take_free_key(*l, *place.me, known, deadline);
    if (ec == asio::error::operation_aborted)
        co_return std::nullopt;
    detail::attempt_outcome o{ec, !ec && t.committed && !t.results.empty(),
                              detail::classify_refusal(t.errors)};
    if (o.committed) {
        const kv_entry& e = t.results.back();
        hub.note_local_grant(e);
        hub.saw_write(e);
        if (!place.me->contender_key.empty()) {
            hub.contender_gone(place.me->contender_key);
            place.me->contender_key.clear();
        }
        result.second = make_lease(l, s, e);
    }
    co_return o;
}

// What the hub, our place in its queue and the session say now, for the acquire machine.
detail::acquire_view view_of(lock_state& l, const queue_place& place, session_state& s) {
    auto& hub = *l.hub;
    const auto& me = *place.me;
    detail::acquire_view v;
    v.now = clock::now();
    v.session_lost = s.check(v.now);
    v.session_deadline = s.policy.deadline();
    v.granted_here = me.state == detail::hub_waiter::phase::granted;
    v.read_refused = static_cast<bool>(hub.refusal());
    v.read_failing = hub.failures() > 0;
    v.granted_by_other = handed_by_another_process(hub, me);
    v.state_index = hub.state_index();
    if (hub.fair() && hub.known())
        hub.prune_dead_contenders();
    if (!hub.known()) {
        v.key = detail::key_state::unknown;
        return v;
    }
    if (hub.fair() && hub.state_index() < me.contender_index) {
        // Our place in line is not known before the hub has read our contender key: not a
        // look at the key yet (a one-attempt try waits for that read).
        v.key = detail::key_state::busy;
        return v;
    }
    if (!place.my_turn()) {
        v.key = detail::key_state::not_our_turn;
        return v;
    }
    const kv_entry* known = hub.entry() ? &*hub.entry() : nullptr;
    switch (detail::judge_key(known, s.id, lock_flag_value)) {
    case detail::key_verdict::conflict:
        v.key = detail::key_state::conflict;
        break;
    case detail::key_verdict::ours:
        v.key = hub.held_here_by(s.id) ? detail::key_state::held_here : detail::key_state::ours;
        break;
    case detail::key_verdict::held_by_other:
        v.key = detail::key_state::held_elsewhere;
        break;
    case detail::key_verdict::free:
        v.key = !hub.fair() && v.now < hub.yield_until ? detail::key_state::others_turn
                                                       : detail::key_state::free;
        v.yield_until = hub.yield_until;
        break;
    }
    return v;
}

// The acquire loop. Local waiters on a key queue in the key's hub: only the one at the
// front tries, the others wait for their turn (no herd), and a local release hands the
// key to the front waiter directly. The key's state comes from the hub's shared query.
// Thousands of waiters may park here: what lives across its awaits is kept small, and the
// attempt, the fair-mode enqueue and the cleanup are coroutines of their own.
asio::awaitable<acquire_result> acquire_loop(std::shared_ptr<lock_state> l,
                                             std::shared_ptr<session_state> s, deadline_t deadline,
                                             diagnostics* diag) {
    auto& hub = *l->hub;
    // Only a lease of this key joins: the key's holder here may be another recipe's grant (a
    // multi-lock's), which an acquire of the key waits for instead.
    auto held = l->opts.reentrant
                    ? join_if_held<lease_state>(
                          std::dynamic_pointer_cast<lease_state>(hub.local_holder()), s->id)
                    : nullptr;
    if (held)
        co_return acquire_result{error_code{}, detail::lease_factory::make(std::move(held))};
    detail::acquire_report report{l->consul, grant_kind::lock, l->key};
    auto how = acquire_outcome::taken; // how a lease was granted
    queue_place place{hub, std::make_shared<detail::hub_waiter>(s, l->opts.value)};
    auto subscription = hub.subscribe();
    detail::acquire_fsm fsm{deadline, detail::write_rule::lock_key, l->opts.max_lock_delay_wait};
    bool cancelled = false;
    acquire_result result;
    try {
        if (hub.fair()) {
            place.me->contender_key = contender_key_for(hub, s->id);
            result.first = co_await enter_line(hub, *place.me, deadline);
        }
        // (Could not enter the line: an error, or out of time.)
        const bool in_line = !result.first && (!hub.fair() || place.me->contender_index != 0);
        auto action = in_line ? fsm.next(view_of(*l, place, *s))
                              : detail::acquire_action(detail::acquire_action::kind::finish);
        if (!in_line)
            action.end =
                result.first ? detail::acquire_end::failed : detail::acquire_end::timed_out;
        action = co_await detail::drive_acquire(
            fsm, deadline, action, [&] { return view_of(*l, place, *s); },
            [&](clock::time_point until) { return wait_for_change(hub, *place.me, *s, until); },
            [&] { return attempt(l, s, place, deadline, result); }, [&] { hub.forget(); });
        using end = detail::acquire_end;
        switch (action.end) {
        case end::handed_here:
            how = acquire_outcome::handed_over;
            result.second = make_lease(l, s, *place.me->granted_entry);
            break;
        case end::handed_remote:
            place.me->contender_key.clear(); // the handing release deleted it
            how = acquire_outcome::handed_over;
            result.second = make_lease(l, s, *hub.entry());
            break;
        case end::already_held:
            how = acquire_outcome::already_held;
            result.second = make_lease(l, s, *hub.entry());
            break;
        case end::taken:
            break; // (the lease was made with the attempt's answer)
        case end::cancelled:
            cancelled = true;
            break;
        default: // failed, denied, out of time (not entered in line: result.first says why)
            if (!result.first)
                result.first = detail::error_of(action, *s, hub, l->key, diag);
        }
    } catch (const boost::system::system_error& e) {
        if (e.code() != asio::error::operation_aborted)
            throw;
        cancelled = true;
    }
    const bool maybe_holding = fsm.maybe_holding();
    // An attempt of unknown outcome that a later read showed to have worked (the key names
    // our session) is the lease: nothing to undo then.
    if ((maybe_holding && !result.second) || still_in_line(*place.me)) {
        // Even after a cancellation (which would make any further await throw), and not
        // interruptible by another one: the cleanup is bounded by cleanup_timeout.
        co_await asio::this_coro::throw_if_cancelled(false);
        co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
        co_await leave_no_trace(l, *place.me, maybe_holding && !result.second,
                                result.second.has_value());
    }
    co_return detail::finish_acquire(report, std::move(result), cancelled, how);
}

asio::awaitable<error_code> destroy(std::shared_ptr<lock_state> l) {
    auto [ec, r] =
        co_await detail::call(l->consul, detail::endpoint::kv_get{l->key, query_options{}});
    if (ec)
        co_return ec;
    if (!r.entry)
        co_return error_code{};
    if (r.entry->flags != lock_flag_value || !r.entry->session.empty())
        co_return make_error_code(errc::conflict); // Go: ErrLockConflict / ErrLockInUse
    auto [dec, deleted] = co_await detail::call(
        l->consul,
        detail::endpoint::kv_delete{l->key, kv_delete_options{}.with_cas(r.entry->modify_index)});
    if (dec)
        co_return dec;
    co_return deleted ? error_code{} : make_error_code(errc::conflict);
}

} // namespace

lock::lock(client& c, std::string key, lock_options opts)
    : state_(std::make_shared<lock_state>(c, std::move(key), std::move(opts))) {}

const std::string& lock::key() const noexcept {
    return state_->key;
}

void lock::acquire_impl(state_ptr l, session_ptr s, detail::diagnostics_route* route,
                        asio::any_completion_handler<void(error_code, lock_lease)> h) {
    detail::start_acquire(acquire_loop, std::move(l), std::move(s), std::nullopt, route, nullptr,
                          "lock acquire with an empty conclave::session", std::move(h));
}

void lock::try_acquire_impl(
    state_ptr l, session_ptr s, std::chrono::milliseconds budget, detail::diagnostics_route* route,
    asio::any_completion_handler<void(error_code, std::optional<lock_lease>)> h) {
    detail::start_acquire(acquire_loop, std::move(l), std::move(s), clock::now() + budget, route,
                          nullptr, "lock acquire with an empty conclave::session", std::move(h));
}

void lock::destroy_impl(state_ptr l, asio::any_completion_handler<void(error_code)> h) {
    auto ex = l->consul.get_executor();
    detail::spawn_op(ex, destroy(std::move(l)), std::move(h));
}

} // namespace conclave
