// SPDX-License-Identifier: BSL-1.0
// The acquire loop's decisions, without I/O, for the lock and the semaphore alike: given
// what the hub and the session say now (acquire_view) and what the last step came back
// with, what to do next (acquire_action): wait for a change, attempt the grant's
// transaction, sleep, read again, or finish. The coroutines that drive it (the acquire_loop
// of lock.cpp and of semaphore.cpp) perform the actions and build the views, judging the
// key or the holder record their own way; the rules live here, where unit tests reach every
// branch without a server.
//
// The rules, in the order they are asked:
// - a grant handed to us (by a local release, or by another process's release in fair
//   mode) ends the acquire with it; so does a lost session (its loss reason), and a read
//   Consul's ACLs refuse (permission_denied);
// - a budget (even 0) allows one look: past it, the acquire gives up once the key was seen
//   taken, an attempt was answered, or Consul could not be read at all (not while another
//   acquire's transaction is handing us a grant: its verdict is awaited);
// - not our turn (local waiters ahead), or the key not known yet: wait for a change;
// - a key with other flags is a conflict, judged on a fresh read (one read again first);
// - held by our session with a grant of this process: wait for it to end (shared session);
//   held by our session with none left: the acquire's, without a write;
// - held elsewhere: wait for a change; another process's turn: wait until it ends;
// - free: attempt. Its outcome: committed (the grant); cancelled; unknown (read again and
//   retry after a pause, or give up when the budget is spent or the error is not transient);
//   refused by ACLs (permission_denied, or decide again when only the attempt's extras may
//   have been refused), by the key's lock-delay (pause, doubling), because the session is
//   gone (the session's loss), or because our view was old: a lock waits for the news
//   (bounded), or decides again at once when the news came while the attempt was out (the
//   view is of a later state than the attempt's); a check-and-set of a shared record lost a
//   race, and reads again after a random pause.
#pragma once

#include "recipes/common/acquire_policy.hpp"
#include "recipes/common/cas_race_backoff.hpp"

#include <conclave/error.hpp>

#include <chrono>
#include <cstdint>
#include <optional>

namespace conclave::detail {

/// What the key and our place say, as the recipe judges them (the lock: judge_key and the
/// hub's queue).
enum class key_state {
    unknown,        ///< not read yet: wait for the hub's read
    not_our_turn,   ///< local waiters are ahead of us (or a transaction is in flight)
    busy,           ///< our turn is coming (a transaction or release of ours is in flight)
    conflict,       ///< other flags: not a key this recipe may take (read again first)
    refused,        ///< the state forbids this acquire: view::refused_ec (no second read)
    held_here,      ///< held by our session, by a grant of this process: wait for its end
    ours,           ///< held by our session, with no grant of this process left
    held_elsewhere, ///< held by another session
    others_turn,    ///< free, but another process's turn (view::yield_until)
    /// free, but contenders before us in line (a fair semaphore) may take it until
    /// view::yield_until: waited for like a held key, budget or not
    others_first,
    free, ///< free: attempt
};

/// What the driver sees before each step (no I/O, a snapshot).
struct acquire_view {
    std::chrono::steady_clock::time_point now{};
    /// The session's local deadline (waits never outlast it: its loss is checked then).
    std::chrono::steady_clock::time_point session_deadline{};
    bool session_lost = false;
    bool granted_here = false;     ///< a local release handed us the grant
    bool granted_by_other = false; ///< fair mode: another process's release handed it to us
    bool read_refused = false;     ///< Consul's ACLs refuse the hub's reads
    bool read_failing = false;     ///< the hub's last reads failed
    key_state key = key_state::unknown;
    /// key_state::others_turn, others_first: until when (time_point::max(): until a release of
    /// ours ends).
    std::chrono::steady_clock::time_point yield_until{};
    /// key_state::refused: why.
    error_code refused_ec;
    /// Another acquire's transaction is handing us a grant: its verdict is awaited, even
    /// past the budget.
    bool verdict_pending = false;
    /// key_state::free: the attempt would grant us (not only waiters behind us, as a
    /// semaphore's batch may).
    bool attempt_is_ours = true;
    /// Which state of the key the view is of (the shared query's state_index; for several
    /// keys, anything that changes when one of them does).
    std::uint64_t state_index = 0;
};

/// What an attempt writes, which decides what a refusal means.
enum class write_rule {
    /// Locks a key with the session (a lock): lock-delay and session refusals, and a
    /// refusal for an old view is news the hub's query brings.
    lock_key,
    /// A check-and-set of a record every participant writes (a semaphore's `.lock`): a
    /// refusal is a lost race, read again after a random pause.
    shared_record,
};

/// How an attempt's transaction came back.
struct attempt_outcome {
    error_code ec;                ///< transport or server error: the outcome is unknown
    bool committed = false;       ///< applied (the grant is ours if view::attempt_is_ours was)
    refusal why = refusal::other; ///< when neither: why Consul rolled it back
    /// refusal::denied, but perhaps only for the attempt's extras (which the driver now
    /// leaves out): decide again.
    bool denied_extras = false;
};

/// How the acquire ended.
enum class acquire_end {
    handed_here,   ///< a local release handed it the grant
    handed_remote, ///< another process's release handed it the grant (fair mode)
    already_held,  ///< our session held it already, with no grant of this process left
    taken,         ///< our attempt committed
    failed,        ///< action::ec says why
    read_denied,   ///< Consul's ACLs refuse the reads (the driver says which, with its diag)
    write_denied,  ///< Consul's ACLs refuse the attempt's write
    timed_out,     ///< the budget was spent: an empty result
    cancelled,     ///< cancelled during an attempt
};

struct acquire_action {
    enum class kind {
        wait,    ///< until something changes (the hub, our place, the session), or `until`
        attempt, ///< send the grant's transaction (its outcome may be unknown until answered)
        sleep,   ///< pause `pause` (never past the budget), after reading again if `reread`
        reread,  ///< forget the hub's view and decide again on a fresh read
        finish,  ///< done: `end` (and `ec` for failed)
    };
    explicit acquire_action(kind k = kind::wait)
        : what(k) {}

    kind what;
    std::chrono::steady_clock::time_point until{}; ///< wait
    std::chrono::steady_clock::duration pause{};   ///< sleep
    bool reread = false;                           ///< sleep: forget the hub's view first
    acquire_end end = acquire_end::failed;         ///< finish
    error_code ec;                                 ///< finish with failed
    bool session_gone = false; ///< finish: Consul no longer knows the session: mark it lost
};

/// The acquire loop's state between steps: next() after each wake-up, attempted() after
/// each attempt. Not thread-safe; one per acquire.
class acquire_fsm {
public:
    using clock = std::chrono::steady_clock;

    acquire_fsm(std::optional<clock::time_point> deadline, write_rule rule,
                std::chrono::milliseconds max_lock_delay_wait = std::chrono::milliseconds{1000})
        : deadline_(deadline)
        , rule_(rule)
        , delay_backoff_(max_lock_delay_wait) {}

    /// The next step, from what the hub and the session say now.
    acquire_action next(const acquire_view& v);
    /// The next step after an attempt came back with `o`.
    acquire_action attempted(const acquire_view& v, const attempt_outcome& o);
    /// The attempt was cancelled (it comes back as a value): finish, never an empty "not
    /// acquired" even with the budget spent.
    acquire_action cancelled();

    /// An attempt was sent whose outcome is not known: if the acquire ends without the
    /// grant, the driver undoes it (releases the key if it names our session).
    bool maybe_holding() const noexcept { return maybe_holding_; }
    /// The key was seen taken, or an attempt was answered (a spent budget then ends it).
    bool looked() const noexcept { return looked_; }

private:
    clock::time_point wake_by(const acquire_view& v) const;
    acquire_action after_answer(const acquire_view& v, const attempt_outcome& o);
    acquire_action wait(clock::time_point until) const;
    static acquire_action finish(acquire_end end, error_code ec = {});
    bool past(clock::time_point now) const { return deadline_ && now >= *deadline_; }

    std::optional<clock::time_point> deadline_;
    write_rule rule_;
    lock_delay_backoff delay_backoff_;
    retry_backoff backoff_;
    // Made at the first lost race: seeding it costs a system call (std::random_device), too
    // much for every acquire.
    std::optional<cas_race_backoff> race_;
    bool maybe_holding_ = false;
    bool looked_ = false;
    bool conflict_reread_ = false;
    bool attempt_is_ours_ = true;     // the attempt in flight would grant us
    std::uint64_t attempt_basis_ = 0; // the state_index of the view the attempt was built on
};

} // namespace conclave::detail
