// SPDX-License-Identifier: BSL-1.0
// semaphore_hub: what every local user of one semaphore prefix shares: the prefix's latest
// known state (`.lock` and the contender keys), one blocking list query that keeps it fresh,
// and the FIFO queue of local waiters.
//
// Why: without it, each waiter and each permit monitor runs its own blocking list of the
// prefix, and every change wakes them all to race a CAS on `.lock` (a thundering herd). With
// it, a client runs one query per prefix, only the waiter at the front of the queue tries,
// and it adds as many queued local waiters as there are free slots in the same CAS; a local
// release hands its slot to the next local waiter inside the releasing transaction.
#pragma once

#include "recipes/common/grant.hpp"
#include "recipes/common/notifier.hpp"
#include "recipes/common/shared_query.hpp"
#include "recipes/session/session_state.hpp"

#include <conclave/client.hpp>
#include <conclave/consul/kv.hpp>

#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace conclave::detail {

/// One local acquire waiting for a slot.
struct semaphore_waiter {
    enum class phase {
        waiting, ///< in the queue
        handing, ///< someone else's transaction is adding it to the holders
        granted, ///< that transaction committed: `granted_index` is `.lock`'s ModifyIndex
    };

    semaphore_waiter(std::shared_ptr<session_state> s, std::uint32_t l, std::uint32_t n = 1)
        : session(std::move(s))
        , limit(l)
        , slots(n) {}

    std::shared_ptr<session_state> session;
    /// Of the waiter's semaphore object (only equal limits are batched); 0 for a resizable
    /// one, which takes the limit `.lock` records.
    std::uint32_t limit;
    std::uint32_t slots; ///< how many slots it asks for
    /// Its contender key is written and held by its session: it may be added to the holders.
    bool enqueued = false;
    /// The acquire is ending without a permit: nobody may add it to the holders any more.
    bool leaving = false;
    /// It was part of a transaction whose outcome it cannot be sure of: on leaving, it must
    /// make sure it is not a holder.
    bool was_handed = false;
    /// It stopped waiting for a handing transaction: whoever sent it undoes a commit.
    bool orphaned = false;
    phase state = phase::waiting;
    std::uint64_t granted_index = 0;
    /// Its session's permit ended without a release (its last handle dropped): the slot the
    /// session still holds may be taken over, even away from the front.
    bool recheck = false;
    /// Whether it looked, once settled, for slots its session holds with no permit left.
    bool checked_left_slots = false;
    /// Fair mode: since when it leaves a free slot to the contenders before it, and to whom
    /// (the first in line then).
    std::optional<std::chrono::steady_clock::time_point> deferring_since;
    std::vector<std::string> deferring_to;
    /// Wakes this waiter alone (reaching the front, handed a slot).
    notifier wake;

    /// May be added to the holders by someone else's transaction now.
    bool can_be_handed(std::chrono::steady_clock::time_point now) const {
        return state == phase::waiting && enqueued && !leaving && !session->check(now);
    }
};

class semaphore_hub final : public shared_query {
public:
    /// The hub of `prefix` on `c`, shared by every semaphore object of that client and prefix.
    static std::shared_ptr<semaphore_hub> of(const client& c, const std::string& prefix,
                                             settings s);

    semaphore_hub(client c, std::string prefix, settings s);

    const std::string prefix;
    const std::string lock_key; ///< `<prefix>/.lock`

    std::string contender_key(const std::string& session) const;

    // ---- the prefix's latest known state (known(), failures(): see shared_query) -------
    /// Every key under the prefix, `.lock` included, when known().
    const std::vector<kv_entry>& entries() const noexcept { return entries_; }
    /// `.lock` among entries(), or null.
    const kv_entry* lock_entry() const;

    /// Records `.lock` as written by a local transaction (`lock` from its `get`, written by a
    /// check-and-set at `based_on`), with the contender keys of the sessions it added (held,
    /// as they were written before) and without the contender key it deleted nor the dead
    /// ones it swept; wakes everyone. Ignored when older than what is known. The other keys
    /// are as of the last read: the query reads again at once (they may have changed before
    /// the write). When `based_on` is not the known `.lock`'s ModifyIndex, nothing is
    /// patched: everything is read again (the write may list holders whose contender keys
    /// were never read).
    void saw_write(const kv_entry& lock, std::uint64_t based_on,
                   const std::vector<std::string>& added_sessions,
                   const std::string& deleted_contender,
                   const std::vector<std::string>& swept = {});

    /// A check-and-set of ours on `.lock` was refused: the view is out of date, and everyone
    /// waits for the next read. Unlike forget(), a read in flight is left to finish: it blocks
    /// at an index older than the change that refused us, so Consul answers it at once. Ended,
    /// it would keep its connection counted until its wait is over (by Consul 1.8, and so by
    /// the pool: see client.cpp): a process that loses many races (fair mode, several
    /// processes) would fill its pool with abandoned reads, and its requests would wait for a
    /// connection, the others leaving the slots to its waiters meanwhile.
    void outdated() {
        mark_unknown();
        poke();
    }

    /// Consul's ACLs refused an acquire transaction that also deleted dead contender keys:
    /// the later ones of this hub delete none (the token may write its own contender key
    /// and `.lock`, not every key under the prefix).
    bool sweep_denied = false;

    // ---- one slot per session ---------------------------------------------------------
    // Go's layout has one contender key and one holder entry per session: a session holds
    // one slot, however many local acquires use it. Two permits of one session would
    // both "hold" that slot, and the first release would free it under the second. So a
    // session's second acquire waits for its first permit to end, and the cleanups that
    // take a session out (its holder entry, its contender key) leave alone what another
    // local acquire of that session still uses.

    /// The latest permit of this process per session (an entry goes with its permit).
    std::map<std::string, std::weak_ptr<grant_state>> local_permits;
    /// The permit of this process holding a slot with `session` (neither released nor
    /// lost, a handle left), or null.
    std::shared_ptr<grant_state> permit_here(const std::string& session) const;
    bool held_here_by(const std::string& session) const { return permit_here(session) != nullptr; }
    /// A queued waiter of `session` is being added to the holders, or was just added (its
    /// permit not made yet).
    bool granting_here(const std::string& session) const;
    /// A queued waiter uses `session` (its contender key is the session's).
    bool waits_here(const std::string& session) const;
    /// How many slots the queued waiter of `session` asks for; 1 when none waits here (an
    /// other process's contender: Go's layout does not say).
    std::uint32_t slots_asked(const std::string& session) const;
    /// Whether this process has, or is getting, the slot of `session`, or is taking the
    /// session out: an acquire with it must not take a slot now.
    bool slot_busy(const std::string& session) const {
        return held_here_by(session) || clearing.count(session) > 0 || granting_here(session);
    }
    /// A permit of `session` ended without a release (its last handle dropped): its waiters
    /// may take the slot over.
    void permit_dropped(const std::string& session);

    /// Sessions a local cleanup (a release, an acquire giving up) is taking out of the
    /// holders or whose contender key it deletes, with how many cleanups do. Meanwhile no
    /// acquire with such a session writes its contender key (the delete could land after
    /// it) or takes a slot (the cleanup could remove it).
    std::map<std::string, unsigned> clearing;

    // ---- the queue of local waiters -------------------------------------------------
    std::list<std::shared_ptr<semaphore_waiter>> queue;
    /// CAS transactions of ours on `.lock` in flight: their outcome will change `.lock`, so
    /// nobody else tries meanwhile and the shared query waits for them.
    unsigned attempts_in_flight = 0;
    /// Local releases, in the order they were called: one at a time sends its transaction
    /// (they all CAS the same `.lock`), first come first served. Without the order, a
    /// release waiting for "no attempt in flight" could wait forever behind a stream of
    /// others, holding its slot all the while.
    std::list<char> releases;

    /// Wakes the subscribers of `changed` (front waiter, permit monitors) and the front
    /// waiter. Waiters further back sleep on their own notifier: waking thousands of them
    /// on every change would cost O(waiters) per change for nothing.
    void poke() override {
        shared_query::poke();
        if (!queue.empty())
            queue.front()->wake.notify_all();
    }

private:
    bool transaction_in_flight() const override { return attempts_in_flight > 0; }
    asio::awaitable<error_code> read_once(query_options q, asio::cancellation_slot stop) override;
    /// Once the query stops, nothing keeps the state fresh: a release must not trust it.
    void query_stopped() override { mark_unknown(); }

    std::vector<kv_entry> entries_;
};

/// Marks `session` as being cleared (semaphore_hub::clearing) for its lifetime, and wakes
/// the hub when it ends. An empty session marks nothing.
class clearing_scope {
public:
    clearing_scope(semaphore_hub& hub, std::string session);
    ~clearing_scope();
    clearing_scope(const clearing_scope&) = delete;
    clearing_scope& operator=(const clearing_scope&) = delete;

private:
    semaphore_hub& hub_;
    std::string session_;
};

} // namespace conclave::detail
