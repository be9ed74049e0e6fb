// SPDX-License-Identifier: BSL-1.0
// key_hub: what every local user of one lock key shares: the key's latest known state, one
// blocking query that keeps it fresh, and the queue of local waiters.
//
// Why: without it, each waiter and each lease monitor runs its own blocking query, and a
// release wakes them all to race for the key (a thundering herd: N requests and N-1 refusals
// per handoff). With it, a client runs one blocking query per key however many local users
// it has, and only the waiter at the front of the queue tries to acquire; a local release
// can even hand the key straight to that waiter in the releasing transaction.
#pragma once

#include "recipes/common/grant.hpp"
#include "recipes/common/notifier.hpp"
#include "recipes/common/shared_query.hpp"
#include "recipes/session/session_state.hpp"

#include <conclave/client.hpp>
#include <conclave/consul/kv.hpp>

#include <list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace conclave::detail {

/// One local acquire waiting for its turn on a key.
struct hub_waiter {
    enum class phase {
        waiting, ///< in the queue
        handing, ///< a releasing holder is handing it the key in a transaction
        granted, ///< that transaction committed: `granted_entry` is the key as acquired
        gone,    ///< the acquire ended (cancelled, failed) while `handing`
    };

    hub_waiter(std::shared_ptr<session_state> s, std::string v)
        : session(std::move(s))
        , value(std::move(v)) {}

    std::shared_ptr<session_state> session;
    std::string value; ///< the lock's value, written when handed the key
    /// Fair mode: this waiter's contender key and its CreateIndex (empty once deleted).
    std::string contender_key;
    std::uint64_t contender_index = 0;
    /// Wakes this waiter alone (e.g. when it reaches the front of the queue).
    notifier wake;
    phase state = phase::waiting;
    /// On the heap: only a granted waiter has one, and thousands may wait.
    std::unique_ptr<kv_entry> granted_entry;
};

class key_hub;

/// The grant of one key held in this process, shared by every hub of that key on one client
/// (a fair-mode lock's and the others': multi-locks use the latter). Consul lets a session
/// acquire a key it holds again, so two local acquires with one session would both "hold"
/// it: the second waits for this grant to end instead, whichever recipe holds it.
struct key_holder {
    static std::shared_ptr<key_holder> of(const client& c, const std::string& key);

    /// The latest grant of the key to this process (until it is released, lost, or its
    /// last handle dropped).
    std::weak_ptr<grant_state> grant;
    /// The key's hubs on this client: each is woken when the grant ends without a change
    /// of the key in Consul (its last handle dropped), which no query would tell them.
    std::vector<std::weak_ptr<key_hub>> hubs;
    /// Adds a hub made anew (and forgets those gone: hubs come and go with their users).
    void add(const std::shared_ptr<key_hub>& hub);
    void poke_all();
};

class key_hub final : public shared_query {
public:
    /// The hub of `key` on `c`, shared by every lock object of that client and key.
    static std::shared_ptr<key_hub> of(const client& c, const std::string& key, settings s);

    key_hub(client c, std::string key, settings s);

    const std::string key;

    // ---- the key's latest known state (known(), state_index(): see shared_query) --------
    /// The key when known() (empty optional: absent).
    const std::optional<kv_entry>& entry() const noexcept { return entry_; }

    // ---- fair mode ------------------------------------------------------------------
    bool fair() const noexcept { return options().fair; }
    /// "<key>/.queue/": where contender keys live.
    std::string queue_prefix() const { return key + "/.queue/"; }
    /// The contender keys as last read, oldest (smallest CreateIndex) first.
    const std::vector<kv_entry>& contenders() const noexcept { return contenders_; }
    /// Whether `w` may try now in fair mode: the state is at least as recent as its
    /// contender key, and that key is the oldest one still held by a session.
    bool first_in_line(const hub_waiter& w) const;
    /// A contender key we deleted in a transaction (so nobody waits for a re-read).
    void contender_gone(const std::string& k);
    /// Deletes (CAS, in the background, once each) contender keys whose session is gone.
    void prune_dead_contenders();

    /// Records the key as written by a local transaction (acquire, release, handoff) and
    /// wakes everyone; ignored when older than what is known.
    void saw_write(const kv_entry& e);

    // ---- turns between processes (without fair mode; lock_options::local_turn) --------
    /// Grants this process took in a row, no other process holding the key in between.
    unsigned local_streak = 0;
    /// While a release that ends this process's turn is under way (time_point::max()), and
    /// after it: this process's waiters do not try before then, so that a waiter of
    /// another process can take the key.
    clock::time_point yield_until{};
    /// A grant to this process (an acquire, or a local handoff) of the key as written.
    /// Consul adds 1 to the key's LockIndex for every new holder, so a gap means another
    /// process held it in between. (Not from reads: the blocking read that was waiting
    /// when our own handoff went out can return before the handoff's answer.)
    void note_local_grant(const kv_entry& granted) {
        local_streak = granted.lock_index == last_local_lock_index_ + 1 ? local_streak + 1 : 1;
        last_local_lock_index_ = granted.lock_index;
    }

    // ---- the grant held here ----------------------------------------------------------
    /// Shared with the key's other hubs on this client (key_holder).
    std::shared_ptr<key_holder> holder;
    /// The latest grant of the key to this process, by any recipe.
    std::shared_ptr<grant_state> local_holder() const { return holder->grant.lock(); }
    /// Whether a live grant of this process holds the key with `session`.
    bool held_here_by(const std::string& session) const {
        const auto h = local_holder();
        return h && !h->released && !h->lost && h->session->id == session;
    }

    // ---- the queue of local waiters -------------------------------------------------
    std::list<std::shared_ptr<hub_waiter>> queue;
    /// An acquire or handoff transaction of ours is in flight: its outcome will change the
    /// key, so nobody else tries meanwhile and the shared query waits for it.
    bool attempt_in_flight = false;

    /// Wakes whoever may act on a change: the subscribers of `changed` (the waiter at the
    /// front, lease monitors, fair-mode waiters) and the front waiter. Waiters further
    /// back sleep on their own notifier: waking thousands of them on every change of the
    /// key would cost O(waiters) per change for nothing.
    void poke() override {
        shared_query::poke();
        if (!queue.empty())
            queue.front()->wake.notify_all();
    }

private:
    bool transaction_in_flight() const override { return attempt_in_flight; }
    asio::awaitable<error_code> read_once(query_options q, asio::cancellation_slot stop) override;
    asio::awaitable<void> after_read() override;
    // Nobody followed the key since: it may have changed, or Consul's history been
    // replaced (a blocking read at our old index would then wait its whole wait).
    void query_stopped() override { mark_unknown(); }

    std::optional<kv_entry> entry_;
    std::uint64_t last_local_lock_index_ = 0; ///< LockIndex of this process's latest grant
    std::vector<kv_entry> contenders_;
    std::set<std::string> pruning_; ///< dead contender keys being deleted
};

/// Marks a transaction of ours on the hub's key as in flight for its lifetime, and wakes
/// the hub when it ends, however it ends: the query waits while one is in flight.
class attempt_scope {
public:
    /// `hub` null: nothing to mark (a release that hands the key to nobody).
    explicit attempt_scope(key_hub* hub)
        : hub_(hub) {
        if (hub_)
            hub_->attempt_in_flight = true;
    }
    explicit attempt_scope(key_hub& hub)
        : attempt_scope(&hub) {}
    ~attempt_scope() {
        if (!hub_)
            return;
        hub_->attempt_in_flight = false;
        hub_->poke();
    }
    attempt_scope(const attempt_scope&) = delete;
    attempt_scope& operator=(const attempt_scope&) = delete;

private:
    key_hub* hub_;
};

} // namespace conclave::detail
