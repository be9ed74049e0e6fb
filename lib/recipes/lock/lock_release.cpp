// SPDX-License-Identifier: BSL-1.0
// Releasing a lock key, with the direct handoff to the next local waiter.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "recipes/lock/lock_release.hpp"

#include <boost/asio/co_spawn.hpp>

#include <algorithm>

namespace conclave::detail {

using clock = std::chrono::steady_clock;
using phase = hub_waiter::phase;

asio::awaitable<void> release_for(std::shared_ptr<key_hub> hub, std::string session,
                                  std::string value, std::chrono::milliseconds timeout) {
    std::vector<txn_op> ops{
        txn_op::unlock(hub->key, std::move(session), std::move(value), lock_flag_value)};
    auto [ec, t] =
        co_await call(hub->consul, endpoint::txn{std::move(ops), {}}, clock::now() + timeout);
    if (!ec && t.committed && !t.results.empty())
        hub->saw_write(t.results.front());
    else
        hub->forget();
}

namespace {

// Longest pause of this process's waiters after the end of its turn.
constexpr std::chrono::milliseconds max_turn_pause{200};

// While a release that ends this process's turn is under way, its waiters do not try
// (yield_until is the end of time); afterwards, until the time given, or (no release made)
// as before.
class yield_scope {
public:
    explicit yield_scope(key_hub* hub)
        : hub_(hub) {
        if (!hub_)
            return;
        after_ = hub_->yield_until;
        hub_->yield_until = clock::time_point::max();
    }
    ~yield_scope() {
        if (!hub_)
            return;
        hub_->yield_until = after_;
        hub_->poke();
    }
    yield_scope(const yield_scope&) = delete;
    yield_scope& operator=(const yield_scope&) = delete;
    void until(clock::time_point t) { after_ = t; }

private:
    key_hub* hub_;
    clock::time_point after_{};
};

// Whether contender key `c` is one of this process's waiters.
bool waits_here(const key_hub& hub, const kv_entry& c) {
    return std::any_of(hub.queue.begin(), hub.queue.end(),
                       [&](const auto& w) { return w->contender_key == c.key; });
}

// Fair mode with a preferred value: the preferred contender when it waits in another
// process (a live contender key carrying that value, not ours, not a local waiter's).
std::optional<kv_entry> preferred_elsewhere(const key_hub& hub, const std::string& releasing,
                                            const std::string& preferred) {
    if (preferred.empty() || !hub.fair() || !hub.known())
        return std::nullopt;
    for (const auto& c : hub.contenders()) {
        if (!c.session.empty() && c.value == preferred && c.session != releasing &&
            !waits_here(hub, c))
            return c;
    }
    return std::nullopt;
}

// The waiter a release may hand the key to: the front of the queue, if it is waiting for
// its turn and its session is alive, and nobody else is mid-transaction on the key. With a
// preferred value (fair mode): a local waiter with that value first; none when the
// preferred contender waits in another process (next_elsewhere hands it the key).
std::shared_ptr<hub_waiter> next_in_line(key_hub& hub, const std::string& releasing,
                                         const std::string& preferred) {
    if (hub.attempt_in_flight || hub.queue.empty())
        return nullptr;
    auto usable = [](const std::shared_ptr<hub_waiter>& w) {
        return w->state == phase::waiting && !w->session->check(clock::now());
    };
    if (hub.fair() && !preferred.empty()) {
        for (auto& w : hub.queue)
            if (w->value == preferred && w->session->id != releasing && usable(w))
                return w;
        if (preferred_elsewhere(hub, releasing, preferred))
            return nullptr;
    }
    if (hub.fair()) {
        // Only if the oldest contender across all processes is one of ours.
        for (auto& w : hub.queue)
            if (hub.first_in_line(*w))
                return usable(w) ? w : nullptr;
        return nullptr;
    }
    auto& w = hub.queue.front();
    return usable(w) ? w : nullptr;
}

// The waiter left (cancelled, timed out) while the key was being handed to it: give the
// key back up in the background so it is not held by an acquire that reported failure.
void undo_handoff(const std::shared_ptr<key_hub>& hub, const hub_waiter& w,
                  std::chrono::milliseconds timeout) {
    asio::co_spawn(hub->consul.get_executor(), release_for(hub, w.session->id, w.value, timeout),
                   [](std::exception_ptr) {});
}

// Fair mode: the oldest contender with a live session, when it waits in another process
// (a local one is next_in_line's). The release then hands the key to it too: the lock
// written with its session and its value (its contender key carries it), its contender key
// checked as last seen and deleted (a contender that left meanwhile is handed nothing). It
// learns from its own query that its session holds the key: 1.5 round trips per handoff
// instead of release, wake, and an acquire of its own.
std::optional<kv_entry> next_elsewhere(const key_hub& hub, const std::string& releasing,
                                       const std::string& preferred) {
    if (!hub.fair() || !hub.known() || hub.attempt_in_flight)
        return std::nullopt;
    if (auto p = preferred_elsewhere(hub, releasing, preferred))
        return p;
    for (const auto& c : hub.contenders()) {
        if (c.session.empty())
            continue; // dead: pruned
        if (waits_here(hub, c) || c.session == releasing)
            return std::nullopt;
        return c;
    }
    return std::nullopt;
}

} // namespace

asio::awaitable<error_code> release_lease(std::shared_ptr<lease_state> L, bool hand_over) {
    if (L->released)
        co_return error_code{};
    auto& lock = *L->recipe;
    auto hub = lock.hub;
    const auto& releasing = L->token.session;
    // This process's turn is over (lock_options::local_turn): the key goes to nobody here.
    const bool turn_over =
        !hub->fair() && lock.opts.local_turn > 0 && hub->local_streak >= lock.opts.local_turn;
    auto next =
        hand_over && !turn_over ? next_in_line(*hub, releasing, lock.opts.preferred) : nullptr;
    auto elsewhere =
        hand_over && !next ? next_elsewhere(*hub, releasing, lock.opts.preferred) : std::nullopt;

    std::vector<txn_op> ops{
        txn_op::unlock(L->token.key, L->token.session, lock.opts.value, lock_flag_value)};
    if (elsewhere) {
        ops.push_back(
            txn_op::lock(L->token.key, elsewhere->session, elsewhere->value, lock_flag_value));
        // check-index, not delete-cas: Consul's delete-cas of an absent key succeeds, so a
        // contender that left meanwhile (its key deleted) would be handed the key.
        ops.push_back(txn_op::check_index(elsewhere->key, elsewhere->modify_index));
        ops.push_back(txn_op::remove(elsewhere->key));
        ops.push_back(txn_op::get(L->token.key));
    }
    if (next) {
        ops.push_back(txn_op::lock(L->token.key, next->session->id, next->value, lock_flag_value));
        if (!next->contender_key.empty())
            ops.push_back(txn_op::remove(next->contender_key)); // it leaves the line
        ops.push_back(txn_op::get(L->token.key));
        next->state = phase::handing;
    }
    std::pair<error_code, txn_result> outcome;
    const auto sent = clock::now();
    {
        // A handoff is an attempt on the key (the query waits for it), until it ends.
        const attempt_scope handing{next ? &*hub : nullptr};
        // The end of a turn: our waiters hold back from now on (the blocking read that
        // was waiting may bring them the release before its own answer comes).
        yield_scope yielding{turn_over ? &*hub : nullptr};
        outcome = co_await call(lock.consul, endpoint::txn{std::move(ops), {}},
                                sent + lock.consul.config().request_timeout);
        if (turn_over && !outcome.first && outcome.second.committed) {
            // Waiters elsewhere learn of the release about when we do; their acquire
            // then takes about as long as the release did. Ours hold back for both
            // (bounded: a release slowed by a stalling Consul says little).
            hub->local_streak = 0;
            const auto pause = std::min<clock::duration>(2 * (clock::now() - sent), max_turn_pause);
            yielding.until(clock::now() + pause);
        }
    }
    auto& [ec, t] = outcome;

    const bool handed_over = !ec && t.committed && next;
    if (handed_over)
        hub->note_local_grant(t.results.back());
    if (next) {
        if (next->state == phase::gone) {
            if (handed_over || ec) // it holds (or may hold) the key but reported failure
                undo_handoff(hub, *next, lock.opts.cleanup_timeout);
        } else if (handed_over) {
            next->granted_entry = std::make_unique<kv_entry>(t.results.back());
            next->state = phase::granted;
            next->wake.notify_all(); // (it may not be at the front: a preferred waiter)
            if (!next->contender_key.empty()) {
                hub->contender_gone(next->contender_key);
                next->contender_key.clear();
            }
        } else {
            next->state = phase::waiting;
        }
    }
    if (ec) {
        hub->forget(); // the key may have changed hands: everyone reads it again
        co_return ec;  // unknown outcome: still counts as held, the caller may retry
    }
    const bool ours_failed = std::any_of(t.errors.begin(), t.errors.end(),
                                         [](const txn_error& e) { return e.op_index == 0; });
    if (!t.committed && (next || elsewhere) && !ours_failed) {
        // The waiter could not take it: its session is gone (a local one is marked so
        // that it ends), or another process's contender left the line. Release plainly.
        if (next) {
            next->session->gone_on_server = true;
            next->session->mark_lost(make_error_code(errc::session_invalidated));
        }
        co_return co_await release_lease(std::move(L), false);
    }
    if (t.committed && elsewhere)
        hub->contender_gone(elsewhere->key);
    if (!t.committed) // not ours any more: it was lost before this release (reported so)
        L->mark_lost(make_error_code(errc::lock_lost));
    L->mark_released();
    if (t.committed)
        hub->saw_write(t.results.back()); // the next acquire can check against this index
    // else: it was not ours any more, nothing to release; the hub's query has the news.
    L->mark_lost(make_error_code(errc::lock_lost));
    hub->poke();
    co_return error_code{};
}

} // namespace conclave::detail
