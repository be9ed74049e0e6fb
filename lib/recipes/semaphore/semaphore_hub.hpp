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

#include "recipes/common/notifier.hpp"
#include "recipes/common/shared_query.hpp"
#include "recipes/session/session_state.hpp"

#include <conclave/client.hpp>
#include <conclave/consul/kv.hpp>

#include <list>
#include <memory>
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

    semaphore_waiter(std::shared_ptr<session_state> s, std::uint32_t l)
        : session(std::move(s))
        , limit(l) {}

    std::shared_ptr<session_state> session;
    std::uint32_t limit; ///< of the waiter's semaphore object (only equal limits are batched)
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

    /// Records `.lock` as written by a local transaction (`lock` from its `get`), with the
    /// contender keys of the sessions it added (held, as they were written before) and
    /// without the contender key it deleted; wakes everyone. Ignored when older than what is
    /// known.
    void saw_write(const kv_entry& lock, const std::vector<std::string>& added_sessions,
                   const std::string& deleted_contender);

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

} // namespace conclave::detail
