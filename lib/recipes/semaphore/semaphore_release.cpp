// SPDX-License-Identifier: BSL-1.0
// Releasing a permit, with the direct handoff to the next local waiter.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/semaphore/semaphore_handoff.hpp"
#include "recipes/semaphore/semaphore_release.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>

namespace conclave::detail {

using clock = std::chrono::steady_clock;

namespace {

// `.lock` as the release decides on it: the hub's state when it is current (no request),
// else read now.
asio::awaitable<std::pair<error_code, std::optional<kv_entry>>>
current_lock(semaphore_hub& hub, bool may_use_hub, clock::time_point deadline) {
    using result = std::pair<error_code, std::optional<kv_entry>>;
    if (may_use_hub && hub.known() && hub.failures() == 0) {
        const kv_entry* e = hub.lock_entry();
        co_return result{error_code{}, e ? std::optional<kv_entry>{*e} : std::nullopt};
    }
    auto [ec, r] =
        co_await call(hub.consul, endpoint::kv_get{hub.lock_key, query_options{}}, deadline);
    co_return result{ec, std::move(r.entry)};
}

// This release's place among the local releases (see semaphore_hub::releases).
struct release_turn {
    semaphore_hub& hub;
    std::list<char>::iterator it;
    explicit release_turn(semaphore_hub& h)
        : hub(h)
        , it(hub.releases.insert(hub.releases.end(), 0)) {}
    ~release_turn() {
        hub.releases.erase(it);
        hub.poke();
    }
    release_turn(const release_turn&) = delete;
    release_turn& operator=(const release_turn&) = delete;
    /// First in line, and no CAS of ours in flight (ours would race it and lose).
    bool now() const { return hub.releases.begin() == it && hub.attempts_in_flight == 0; }
};

// Deletes `session`'s contender key once no local acquire uses it any more. A release keeps
// the key for a waiter of its session; a waiter that leaves while a permit of its session
// lives leaves the key to that permit: when the waiter left during the release, nobody
// else deletes it.
asio::awaitable<void> delete_unused_contender(semaphore_state& sem, const std::string& session,
                                              clock::time_point until) {
    auto& hub = *sem.hub;
    if (hub.waits_here(session) || hub.held_here_by(session))
        co_return;
    const clearing_scope clearing{hub, session};
    auto [ec, deleted] = co_await call(
        sem.consul, endpoint::kv_delete{sem.contender_key(session),
                                        kv_delete_options{}.with_timeout(time_left(until))});
    (void)ec; // (a key left behind ends with its session)
    (void)deleted;
}

// Who the free slots go to in the release (`record`, without us): the next local waiters
// that fit, first come first served (one may be another acquire of our session: it then
// holds the slots after us). In fair mode, only the first in line, if they wait here; our
// own contender key stands in no line (it is counted as a holder's).
handoff_batch::waiters next_holder(const semaphore_state& sem, const semaphore_hub& hub,
                                   const semaphore_record& record, const std::string& me) {
    const auto free = record.free();
    if (!sem.opts.fair)
        return next_in_line(hub, record.limit_slots(), record, "", free, me);
    auto line = record;
    line.holders.emplace(me, 1);
    const auto first = first_in_line(sem.prefix, hub.entries(), line, free,
                                     [&](const std::string& id) { return hub.slots_asked(id); });
    return next_in_line(hub, record.limit_slots(), record, "", free, me, &first);
}

} // namespace

asio::awaitable<error_code> release_permit(std::shared_ptr<permit_state> P) {
    if (P->released)
        co_return error_code{};
    auto& sem = *P->recipe;
    auto hub = sem.hub;
    const auto& me = P->token.session;
    const auto contender = sem.contender_key(me);
    const auto until = clock::now() + sem.consul.config().request_timeout;
    cas_race_backoff race;
    bool may_use_hub = true; // a refused CAS means the hub's state was old: read afresh
    release_turn turn{*hub};
    while (clock::now() < until) {
        while (!turn.now() && clock::now() < until)
            co_await hub->changed.wait(until);
        auto [ec, lock] = co_await current_lock(*hub, may_use_hub, until);
        if (ec)
            co_return ec;
        if (const auto later = hub->permit_here(me); later && later != P) {
            // This permit was lost, and a later one of its session holds the slot now (taken
            // over, or won again): that slot is not this release's to give up.
            P->mark_lost(make_error_code(errc::lock_lost));
            P->mark_released();
            co_return error_code{};
        }
        std::optional<semaphore_record> record;
        if (lock && lock->flags == semaphore_flag_value)
            record = semaphore_record::decode(lock->value, sem.limit);
        const bool listed = record && record->holders.erase(me) > 0;

        std::vector<txn_op> ops;
        handoff_batch::waiters next;
        if (listed) {
            // Our slot goes to a local waiter (next_holder), unless the limit is not ours.
            if (record->limit == static_cast<std::int64_t>(sem.limit) || sem.opts.resizable)
                next = next_holder(sem, *hub, *record, me);
            for (const auto& w : next)
                record->holders[w->session->id] = w->slots;
            ops.push_back(txn_op::cas(sem.lock_key, record->encode(), lock->modify_index,
                                      semaphore_flag_value));
        }
        // Our contender key is the contender key of every local acquire with our session:
        // kept while one waits (the next holder of our slot, or a waiter in the queue).
        const bool keep_contender = hub->waits_here(me);
        if (!keep_contender) {
            ops.push_back(txn_op::remove(contender));
        } else if (sem.opts.fair) {
            // Fair mode: the key is written anew, so the session's next acquire stands at the
            // back of the line (a new CreateIndex) rather than in its first acquire's place.
            ops.push_back(txn_op::remove(contender));
            ops.push_back(txn_op::lock(contender, me, sem.opts.value, semaphore_flag_value));
        }
        if (listed)
            ops.push_back(txn_op::get(sem.lock_key)); // the new holder's fencing index
        if (ops.empty()) {
            // Not a holder any more, and the contender key is a waiter's: nothing to write.
            P->mark_lost(make_error_code(errc::lock_lost));
            P->mark_released();
            co_return error_code{};
        }
        std::vector<std::string> added;
        for (const auto& w : next)
            added.push_back(w->session->id);

        std::pair<error_code, txn_result> outcome;
        {
            handoff_batch batch{hub, std::move(next), sem.limit, sem.opts.cleanup_timeout};
            // A waiter of our session arriving meanwhile writes its contender key after
            // our delete, not before it.
            const clearing_scope clearing{*hub, keep_contender ? std::string{} : me};
            outcome = co_await call(sem.consul, endpoint::txn{std::move(ops), {}}, until);
            auto& [tec, t] = outcome;
            if (!tec && t.committed && listed && !t.results.empty())
                batch.granted(t.results.back().modify_index);
            else if (!tec)
                batch.refused();
            // else: unknown outcome, the batch says so to its members
        }
        auto& [tec, t] = outcome;
        if (tec) {
            hub->forget(); // the slot may have changed hands: everyone reads again
            co_return tec; // unknown outcome: still counts as held, the caller may retry
        }
        if (!t.committed) {
            // Lost a CAS race (or the hub's state was old): read again, a little later.
            may_use_hub = false;
            co_await sleep_for(race.next(), until);
            continue;
        }
        // (Fair mode: a key written anew leaves the view too, until a read brings it with
        // its new place in line.)
        const bool key_gone = !keep_contender || sem.opts.fair;
        if (listed && !t.results.empty())
            hub->saw_write(t.results.back(), lock->modify_index, added,
                           key_gone ? contender : std::string{});
        if (!listed) // not a holder any more: it was lost before this release (reported so)
            P->mark_lost(make_error_code(errc::lock_lost));
        P->mark_released();
        P->mark_lost(make_error_code(errc::lock_lost));
        if (keep_contender)
            co_await delete_unused_contender(sem, me, until);
        co_return error_code{};
    }
    co_return make_error_code(errc::timeout);
}

} // namespace conclave::detail
