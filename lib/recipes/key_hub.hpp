// key_hub: what every local user of one lock key shares: the key's latest known state, one
// blocking query that keeps it fresh, and the queue of local waiters.
//
// Why: without it, each waiter and each lease monitor runs its own blocking query, and a
// release wakes them all to race for the key (a thundering herd: N requests and N-1 refusals
// per handoff). With it, a client runs one blocking query per key however many local users
// it has, and only the waiter at the front of the queue tries to acquire; a local release
// can even hand the key straight to that waiter in the releasing transaction.
#pragma once

#include "recipes/notifier.hpp"
#include "recipes/session_state.hpp"

#include <conclave/client.hpp>
#include <conclave/types.hpp>

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

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

class key_hub : public std::enable_shared_from_this<key_hub> {
public:
    using clock = std::chrono::steady_clock;

    /// Settings of the shared blocking query (taken from the first lock on the key).
    struct settings {
        std::chrono::milliseconds wait{15000};
        std::chrono::milliseconds monitor_retry_wait{1000};
        /// Fair mode: the query also reads the contender keys under `<key>/.queue/`.
        bool fair = false;
    };

    /// The hub of `key` on `c`, shared by every lock object of that client and key.
    static std::shared_ptr<key_hub> of(const client& c, const std::string& key, settings s);

    key_hub(client c, std::string key, settings s);
    ~key_hub();
    key_hub(const key_hub&) = delete;
    key_hub& operator=(const key_hub&) = delete;

    client consul;
    const std::string key;

    // ---- the key's latest known state ----------------------------------------------
    bool known() const noexcept { return known_; }
    /// The key when known() (empty optional: absent).
    const std::optional<kv_entry>& entry() const noexcept { return entry_; }
    /// Consecutive failed reads of the shared query (0 after a success).
    unsigned failures() const noexcept { return failures_; }
    /// The Raft index the known state is as of.
    std::uint64_t state_index() const noexcept { return state_index_; }

    // ---- fair mode ------------------------------------------------------------------
    bool fair() const noexcept { return settings_.fair; }
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
    /// Records the key (absent when `e` is empty), and in fair mode the contender keys,
    /// as read at `index`.
    void saw_read(std::optional<kv_entry> e, std::vector<kv_entry> contenders, std::uint64_t index);
    /// Our view is out of date: read the key again before anyone decides on it.
    void forget();

    /// Wakes on every change of the state above, of the queue, and of attempts.
    notifier changed;

    // ---- subscriptions: the shared query runs while anyone needs it -----------------
    /// Keeps the shared query running while the returned handle lives.
    std::shared_ptr<void> subscribe();

    // ---- the queue of local waiters -------------------------------------------------
    std::list<std::shared_ptr<hub_waiter>> queue;
    /// An acquire or handoff transaction of ours is in flight: its outcome will change the
    /// key, so nobody else tries meanwhile and the shared query waits for it.
    bool attempt_in_flight = false;

    /// Wakes whoever may act on a change: the subscribers of `changed` (the waiter at the
    /// front, lease monitors, fair-mode waiters) and the front waiter. Waiters further
    /// back sleep on their own notifier: waking thousands of them on every change of the
    /// key would cost O(waiters) per change for nothing.
    void poke() {
        changed.notify_all();
        if (!queue.empty())
            queue.front()->wake.notify_all();
    }

    /// Called when a handle returned by subscribe() goes.
    void unsubscribe_for_handle();

private:
    struct read_result {
        std::optional<kv_entry> entry;
        std::vector<kv_entry> contenders;
        std::uint64_t index = 0;
    };
    asio::awaitable<std::pair<error_code, read_result>> read(query_options q);
    asio::awaitable<void> run_query(std::shared_ptr<key_hub> self);
    asio::awaitable<void> idle_for_a_while();
    /// Ends the read in flight, if any (forget(), or nobody needs the query any more).
    void stop_read();

    settings settings_;
    bool known_ = false;
    std::optional<kv_entry> entry_;
    std::vector<kv_entry> contenders_;
    std::set<std::string> pruning_; ///< dead contender keys being deleted
    std::uint64_t state_index_ = 0; ///< Raft index the known state is as of
    std::uint64_t index_ = 0;       ///< blocking index for the shared query
    std::uint64_t read_index_ = 0;  ///< X-Consul-Index of the last read (detects resets)
    unsigned failures_ = 0;
    unsigned subscribers_ = 0;
    bool query_running_ = false;
    notifier subscribers_changed_;
    // The read in flight is bound to this signal. Why not `read || idle || restart`: that
    // runs three coroutines and two parallel groups per read, and a monitored lock cycle
    // makes one read per cycle (~10% of its client instructions).
    asio::cancellation_signal read_stop_;
    bool reading_ = false;
    bool read_stopped_ = false;     ///< the read in flight was ended on purpose
    asio::steady_timer idle_timer_; ///< ends the read once nobody subscribed for a while
};

} // namespace conclave::detail
