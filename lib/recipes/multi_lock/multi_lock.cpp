// SPDX-License-Identifier: BSL-1.0
// multi_lock: the acquire loop (every key checked and locked in one transaction, waits on
// the keys' hubs, lock-delay backoff) and try-acquire with one budget. The decisions are the
// acquire machine's (recipes/common/acquire_fsm.hpp), as for a lock.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/spawn.hpp"
#include "observe/report.hpp"
#include "recipes/common/acquire_driver.hpp"
#include "recipes/common/acquire_end.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/multi_lock/multi_lock_line.hpp"
#include "recipes/multi_lock/multi_lock_ops.hpp"
#include "recipes/multi_lock/multi_lock_release.hpp"
#include "recipes/multi_lock/multi_lock_state.hpp"

#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <deque>

namespace conclave {

using namespace detail;

namespace {

using acquire_result = std::pair<error_code, std::optional<multi_lock_lease>>;

// The keys sorted, or invalid_argument: none, too many, an empty one, one given twice.
std::vector<std::string> checked_keys(std::vector<std::string> keys) {
    auto refuse = [](const char* why) {
        throw boost::system::system_error(make_error_code(errc::invalid_argument), why);
    };
    if (keys.empty())
        refuse("multi_lock without keys");
    if (keys.size() > multi_lock::max_keys)
        refuse("multi_lock of more than 32 keys (Consul's 64 operations per transaction)");
    if (std::any_of(keys.begin(), keys.end(), [](const std::string& k) { return k.empty(); }))
        refuse("multi_lock with an empty key");
    std::sort(keys.begin(), keys.end());
    if (std::adjacent_find(keys.begin(), keys.end()) != keys.end())
        refuse("multi_lock with a key given twice");
    return keys;
}

// The grant of the keys as `entries` (hubs' order) say they are held by `s`. Every key's
// hub then knows this grant holds it here: a local acquire with the same session waits
// for it to end.
multi_lock_lease make_lease(const std::shared_ptr<multi_lock_state>& m,
                            const std::shared_ptr<session_state>& s,
                            const std::vector<const kv_entry*>& entries) {
    std::uint64_t index = 0;
    for (const kv_entry* e : entries)
        index = std::max(index, e->modify_index); // (one transaction: all the same)
    fencing_token t{m->keys.front(), s->id, entries.front()->lock_index, index};
    auto state = std::make_shared<multi_lease_state>(m, s, std::move(t));
    for (auto& hub : m->hubs)
        hub->holder->grant = state;
    return detail::multi_lease_factory::make(std::move(state));
}

// The keys as the hubs know them (all known).
std::vector<const kv_entry*> known_entries(const multi_lock_state& m) {
    std::vector<const kv_entry*> entries;
    for (const auto& hub : m.hubs)
        entries.push_back(&*hub->entry());
    return entries;
}

// What the keys' hubs and the session say now, for the acquire machine. The set is judged
// as its worst key: a conflict, then held elsewhere, then held by a grant of ours here; free
// when none is (keys our session holds already are taken again in the same transaction);
// ours, without a write, when our session holds them all.
detail::acquire_view view_of(const multi_lock_state& m, const detail::multi_lock_line::place& me,
                             session_state& s) {
    detail::acquire_view v;
    v.now = clock::now();
    v.session_lost = s.check(v.now);
    v.session_deadline = s.policy.deadline();
    bool known = true;
    bool busy = false;
    for (const auto& hub : m.hubs) {
        v.read_refused = v.read_refused || static_cast<bool>(hub->refusal());
        v.read_failing = v.read_failing || hub->failures() > 0;
        known = known && hub->known();
        busy = busy || hub->attempt_in_flight;
        v.state_index += hub->state_index(); // (changes when any key's state does)
    }
    if (!known) {
        v.key = detail::key_state::unknown;
        return v;
    }
    if (busy) {
        // A transaction of ours on one of the keys (a lock's attempt or handoff): its
        // outcome changes the key. Not a look at the keys yet.
        v.key = detail::key_state::busy;
        return v;
    }
    if (!me.my_turn()) {
        v.key = detail::key_state::not_our_turn; // an older acquire here could go first
        return v;
    }
    bool elsewhere = false, here = false, all_ours = true;
    for (const auto& hub : m.hubs) {
        const kv_entry* e = hub->entry() ? &*hub->entry() : nullptr;
        switch (detail::judge_key(e, s.id, lock_flag_value)) {
        case detail::key_verdict::conflict:
            v.key = detail::key_state::conflict;
            return v;
        case detail::key_verdict::ours:
            here = here || hub->held_here_by(s.id);
            break;
        case detail::key_verdict::held_by_other:
            elsewhere = true;
            all_ours = false;
            break;
        case detail::key_verdict::free:
            all_ours = false;
            break;
        }
    }
    v.key = elsewhere  ? detail::key_state::held_elsewhere
            : here     ? detail::key_state::held_here
            : all_ours ? detail::key_state::ours
                       : detail::key_state::free;
    return v;
}

// Waits until one of the keys, our turn, or the session changes, or `until`.
asio::awaitable<void> wait_for_change(const multi_lock_state& m,
                                      const detail::multi_lock_line::place& me, session_state& s,
                                      clock::time_point until) {
    std::vector<detail::notifier*> ns;
    ns.reserve(m.hubs.size() + 2);
    for (const auto& hub : m.hubs)
        ns.push_back(&hub->changed);
    ns.push_back(&me.changed());
    ns.push_back(&s.changed);
    co_await detail::notifier::wait_any_of(until, ns);
}

// One attempt, for the acquire machine: every key checked as last seen (its ModifyIndex, or
// absent) and locked with our session, in one transaction, all or nothing. Its outcome, none
// when cancelled; a committed one makes the grant (in `result`). Each key's hub is marked
// busy meanwhile, so that no lock of this process tries one of the keys at the same time.
asio::awaitable<std::optional<detail::attempt_outcome>>
attempt(const std::shared_ptr<multi_lock_state>& m, const std::shared_ptr<session_state>& s,
        deadline_t deadline, acquire_result& result) {
    std::vector<txn_op> ops = detail::attempt_ops(*m, s->id);
    std::deque<detail::attempt_scope> in_flight; // (a deque: scopes stay where they are made)
    for (auto& hub : m->hubs)
        in_flight.emplace_back(*hub);
    auto [ec, t] = co_await detail::call(m->consul, detail::endpoint::txn{std::move(ops), {}},
                                         detail::attempt_deadline(deadline));
    if (ec == asio::error::operation_aborted)
        co_return std::nullopt;
    detail::attempt_outcome o{ec, !ec && t.committed, detail::classify_refusal(t.errors)};
    if (!o.committed)
        co_return o;
    // Each key's entry after the write is the last result naming it (a check-index answers
    // with the key before): it must name our session.
    const auto written = detail::entries_by_key(m->keys, t.results);
    for (const kv_entry* e : written) {
        if (!e || e->session != s->id) {
            // Committed, so the keys are ours, but not as Consul says: an unknown outcome
            // (a later read, or the cleanup, settles it), never a refusal.
            o.ec = make_error_code(errc::bad_response);
            o.committed = false;
            co_return o;
        }
    }
    for (std::size_t i = 0; i < written.size(); ++i) {
        kv_entry entry = *written[i];
        entry.value = m->opts.value; // (Consul answers a write without the value)
        m->hubs[i]->saw_write(entry);
    }
    result.second = make_lease(m, s, written);
    co_return o;
}

// The acquire loop: wait until no key is held by another session, then try all of them in
// one transaction; a refusal (a key taken meanwhile, its lock-delay) is decided by the
// machine as for a lock. An attempt of unknown outcome that the acquire could not settle
// is undone on the way out: every key released in one transaction (all or none were taken).
asio::awaitable<acquire_result> acquire_loop(std::shared_ptr<multi_lock_state> m,
                                             std::shared_ptr<session_state> s, deadline_t deadline,
                                             diagnostics* diag) {
    detail::acquire_report report{m->consul, grant_kind::multi_lock, m->keys.front()};
    auto how = acquire_outcome::taken;
    std::vector<std::shared_ptr<void>> subscriptions;
    for (auto& hub : m->hubs)
        subscriptions.push_back(hub->subscribe());
    detail::acquire_fsm fsm{deadline, detail::write_rule::lock_key, m->opts.max_lock_delay_wait};
    const detail::multi_lock_line::place me{detail::multi_lock_line::of(m->consul), *m, s->id};
    bool cancelled = false;
    acquire_result result;
    try {
        auto action = co_await detail::drive_acquire(
            fsm, deadline, fsm.next(view_of(*m, me, *s)), [&] { return view_of(*m, me, *s); },
            [&](clock::time_point until) { return wait_for_change(*m, me, *s, until); },
            [&] { return attempt(m, s, deadline, result); }, [&] { m->forget_all(); });
        using end = detail::acquire_end;
        switch (action.end) {
        case end::already_held:
            how = acquire_outcome::already_held;
            result.second = make_lease(m, s, known_entries(*m));
            break;
        case end::taken:
            break; // (the grant was made with the attempt's answer)
        case end::cancelled:
            cancelled = true;
            break;
        case end::read_denied: {
            // The first key whose reads Consul's ACLs refuse says which.
            const auto refusing = std::find_if(m->hubs.begin(), m->hubs.end(),
                                               [](const auto& h) { return !!h->refusal(); });
            result.first = detail::read_denied(**refusing, diag);
            break;
        }
        default: // failed, write denied, out of time (nobody hands a multi-lock its keys)
            result.first = detail::error_of(action, *s, *m->hubs.front(), m->keys.front(), diag);
        }
    } catch (const boost::system::system_error& e) {
        if (e.code() != asio::error::operation_aborted)
            throw;
        cancelled = true;
    }
    if (fsm.maybe_holding() && !result.second) {
        // Even after a cancellation, and not interruptible by another one: bounded by
        // cleanup_timeout.
        co_await asio::this_coro::throw_if_cancelled(false);
        co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
        co_await detail::release_keys(*m, s->id, nullptr, clock::now() + m->opts.cleanup_timeout);
    }
    co_return detail::finish_acquire(report, std::move(result), cancelled, how);
}

} // namespace

multi_lock::multi_lock(client& c, std::vector<std::string> keys, multi_lock_options opts)
    : state_(
          std::make_shared<multi_lock_state>(c, checked_keys(std::move(keys)), std::move(opts))) {}

const std::vector<std::string>& multi_lock::keys() const noexcept {
    return state_->keys;
}

void multi_lock::acquire_impl(state_ptr m, session_ptr s, detail::diagnostics_route* route,
                              asio::any_completion_handler<void(error_code, multi_lock_lease)> h) {
    detail::start_acquire(acquire_loop, std::move(m), std::move(s), std::nullopt, route, nullptr,
                          "multi_lock acquire with an empty conclave::session", std::move(h));
}

void multi_lock::try_acquire_impl(
    state_ptr m, session_ptr s, std::chrono::milliseconds budget, detail::diagnostics_route* route,
    asio::any_completion_handler<void(error_code, std::optional<multi_lock_lease>)> h) {
    detail::start_acquire(acquire_loop, std::move(m), std::move(s), clock::now() + budget, route,
                          nullptr, "multi_lock acquire with an empty conclave::session",
                          std::move(h));
}

} // namespace conclave
