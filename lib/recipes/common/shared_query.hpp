// SPDX-License-Identifier: BSL-1.0
// shared_query: one blocking query shared by every local user of a key or prefix. The base
// of the lock's key_hub and the semaphore's semaphore_hub, which add what they read and
// their queues of waiters, of list_hub (a group's, a read-write lock's) and of kv_query.
//
// It runs while anyone subscribes (and a grace period after, unless nothing is left that
// could subscribe again), waits while a transaction of ours is in flight on the state (its
// outcome will change it: reading now would only see the state it replaces), counts
// consecutive failures for the monitors' retry budget, and ends a read in flight when the
// state is forgotten or nobody needs it any more.
#pragma once

#include "consul/blocking/stall_pacing.hpp"
#include "recipes/common/notifier.hpp"

#include <conclave/client.hpp>

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace conclave::detail {

class shared_query : public std::enable_shared_from_this<shared_query> {
public:
    using clock = std::chrono::steady_clock;

    /// Settings of the query (taken from the first recipe object on the key or prefix).
    struct settings {
        std::chrono::milliseconds wait{15000};
        std::chrono::milliseconds monitor_retry_wait{1000};
        /// Fair mode (locks): the query also reads the contender keys.
        bool fair = false;
    };

    /// The object registered as `name` in `c`'s shared state, or a new one made by `make`
    /// (a client's hubs are found by name: one per key or prefix and kind).
    template <class Hub, class Make>
    static std::shared_ptr<Hub> find_or_make(const client& c, const std::string& name, Make make);
    /// Resets an owner's reference (a recipe object's, a subscription's). When only the
    /// query's own is left, nobody but a recipe object made anew can subscribe, so the query
    /// ends now rather than after the grace period: io_context::run() then returns as soon
    /// as a program's work is done.
    template <class Hub>
    static void let_go(std::shared_ptr<Hub>& hub);

    shared_query(client c, std::string registry_name, settings s);
    virtual ~shared_query();
    shared_query(const shared_query&) = delete;
    shared_query& operator=(const shared_query&) = delete;

    client consul;

    bool known() const noexcept { return known_; }
    /// Consecutive failed reads (0 after a success).
    unsigned failures() const noexcept { return failures_; }
    /// The last read was denied by Consul's ACLs (errc::permission_denied, else none): no
    /// retry will do better until the token or the policy changes, so waiters give up with
    /// it. refusal_diag() says which permission is missing.
    error_code refusal() const noexcept { return refusal_; }
    const diagnostics& refusal_diag() const noexcept { return refusal_diag_; }
    /// The Raft index the known state is as of.
    std::uint64_t state_index() const noexcept { return state_index_; }

    /// Keeps the query running while the returned handle lives (a grant's monitor
    /// subscribes only once its section outlasts monitor_start_delay: see grant.hpp).
    std::shared_ptr<void> subscribe();
    /// Called when a handle returned by subscribe() goes.
    void unsubscribe_for_handle();
    /// Our view is out of date: read again (at once) before anyone decides on it.
    void forget();

    /// Wakes on every change of the state, of the queue of waiters, and of attempts.
    notifier changed;
    /// Wakes whoever may act on a change (the hubs add their front waiter, and call this).
    virtual void poke() {
        changed.notify_all();
        wake_idle_query();
    }

protected:
    const settings& options() const noexcept { return settings_; }

    /// Whether a transaction of ours on the state is in flight (the query waits for it).
    virtual bool transaction_in_flight() const = 0;
    /// One read of the state (a blocking one when `q` says so), bound to `stop`; records
    /// what it read through accept_read() and returns the transport/HTTP error, if any.
    virtual asio::awaitable<error_code> read_once(query_options q,
                                                  asio::cancellation_slot stop) = 0;
    /// After a successful read: the hubs let the waiter it woke go first.
    virtual asio::awaitable<void> after_read() { co_return; }
    /// The query stopped (nobody needed it): the hubs decide whether the state may still
    /// be trusted.
    virtual void query_stopped() {}

    /// For read_once: whether a read at `index` is news. False when it is older than a
    /// local write we already know about (keep ours; the query blocks from there). A read
    /// that went backwards (snapshot restore, restarted agent) is the new truth. When true,
    /// the state is known as of `index`: store what was read, then poke().
    bool accept_read(std::uint64_t index);
    /// A local transaction wrote the state at `modify_index`: known as of it.
    void accept_write(std::uint64_t modify_index);
    /// A local transaction wrote part of a state of many keys at `modify_index`: known as of
    /// it, but the query blocks at the last read's index still, so that its next read (at
    /// once) brings what else changed before the write. Blocking at `modify_index` would hide
    /// those changes until the next one after it.
    void accept_partial_write(std::uint64_t modify_index);
    /// The state is unknown until the next read (without interrupting one in flight).
    void mark_unknown() noexcept { known_ = false; }

private:
    asio::awaitable<void> run(std::shared_ptr<shared_query> self);
    asio::awaitable<void> idle_for_a_while();
    asio::awaitable<void> linger();
    void stop_read();
    void wake_idle_query();
    /// Nothing holds this object but the query loop (which holds it while it runs).
    bool unowned() const noexcept { return weak_from_this().use_count() <= 1; }
    void end_if_unowned();

    const std::string registry_name_;
    settings settings_;
    bool known_ = false;
    std::uint64_t state_index_ = 0;    ///< Raft index the known state is as of
    std::uint64_t index_ = 0;          ///< blocking index for the query
    std::uint64_t read_index_ = 0;     ///< X-Consul-Index of the last read (detects resets)
    std::uint64_t asked_index_ = 0;    ///< the index the read in flight blocks at (0: none)
    std::uint64_t writes_ = 0;         ///< local writes seen (accept_write)
    std::uint64_t writes_at_read_ = 0; ///< writes_ when the read in flight was sent
    unsigned failures_ = 0;
    stall_pacing pacing_; ///< reads answered without news are spaced (never a spin)
    error_code refusal_;
    diagnostics refusal_diag_;
    diagnostics read_diag_; ///< of the read in flight
    unsigned subscribers_ = 0;
    bool running_ = false;
    notifier subscribers_changed_;
    // The query lingers without subscribers (linger()) until idle_since_ + idle_grace. A
    // holder that acquires and releases again meanwhile does not wake it: its transaction
    // is in flight by the time a posted check looks (wake_idle_query()), and it is gone
    // again by the time the transaction's end looks. Waking it would cost a coroutine
    // resumption and a timer armed anew per lock cycle (a timerfd_settime system call).
    bool lingering_ = false;
    bool linger_check_posted_ = false;
    clock::time_point idle_since_;
    notifier linger_end_;
    // The read in flight is bound to this signal. Why not `read || idle || restart`: that
    // runs three coroutines and two parallel groups per read, and a monitored lock cycle
    // makes one read per cycle.
    asio::cancellation_signal read_stop_;
    bool reading_ = false;
    bool read_stopped_ = false;     ///< the read in flight was ended on purpose
    asio::steady_timer idle_timer_; ///< ends the read once nobody subscribed for a while
};

/// Deletes `key` in the background if its ModifyIndex is still `index` (a dead contender key
/// a hub saw: never one written again since). Its outcome is not awaited: a key left by a
/// failure is seen and deleted again by a later read.
void delete_in_background(client& c, std::string key, std::uint64_t index);

/// The hub's refusal() for a waiter that gives up with it, its text copied to `diag`.
inline error_code read_denied(const shared_query& hub, diagnostics* diag) {
    if (diag)
        *diag = hub.refusal_diag();
    return hub.refusal();
}

/// The registry of a client's shared objects (a map of weak pointers by name).
std::weak_ptr<void>& shared_slot(const client& c, const std::string& name);

template <class Hub, class Make>
std::shared_ptr<Hub> shared_query::find_or_make(const client& c, const std::string& name,
                                                Make make) {
    auto& slot = shared_slot(c, name);
    if (auto existing = std::static_pointer_cast<Hub>(slot.lock()))
        return existing;
    std::shared_ptr<Hub> hub = make();
    slot = hub;
    return hub;
}

template <class Hub>
void shared_query::let_go(std::shared_ptr<Hub>& hub) {
    shared_query* const query = hub.get();
    const std::weak_ptr<shared_query> alive = hub;
    hub.reset();
    if (!alive.expired())
        query->end_if_unowned();
}

} // namespace conclave::detail
