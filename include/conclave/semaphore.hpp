// SPDX-License-Identifier: BSL-1.0
/// \file
/// At most N holders across processes, with Consul's Go api.Semaphore layout: class
/// semaphore.
#pragma once

#include <conclave/detail/export.hpp>
#include <conclave/lock.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace conclave {

namespace detail {
struct semaphore_state;
struct permit_factory;
} // namespace detail

/// How a semaphore waits for a slot and watches a held permit. Not an aggregate (see
/// conclave/consul/request.hpp): set fields with the with_* calls.
struct semaphore_options : acquire_options<semaphore_options> {
    semaphore_options() = default;

    /// Filled with what a failed acquire or status read says (Consul's text; "semaphore
    /// limit conflict (lock: X, local: Y)") when not null, for tokens other than
    /// with_diagnostics, which carries it in the conclave::error it throws. Shared by every
    /// acquire and status read of this object.
    diagnostics* diag = nullptr;
    /// Re-entrant: an acquire with a session whose permit is held in this process gets that
    /// permit at once, one more hold of it (grant::hold_count), with no request; each
    /// acquire is matched by one release, and only the last release frees the slot. Without
    /// it, that acquire waits for the permit to end (one permit per session). A re-entrant
    /// acquire of fewer slots than the permit holds joins it all the same (permit::slots
    /// says how many it holds); of more, it is errc::invalid_argument.
    bool reentrant = false;
    /// Fair mode: free slots go to the contenders of every process in the order they came
    /// (the CreateIndex of their contender keys; Go peers' keys count too, though Go peers
    /// do not wait their turn). Without it, a release hands its slot to the next waiter of
    /// its own process in the release's transaction, so a busy process keeps its slots while
    /// others wait. In fair mode a release hands its slot on only to the first in line, when
    /// that one waits in the same process; otherwise it frees the slot for the first in line
    /// to take. A bounded acquire waits in line too, and ends with its budget. A waiter leaves
    /// a free slot to the same contenders before it for at most fair_patience, then takes it:
    /// a contender that stays in line without taking its turn (a stuck process whose session
    /// lives on) slows the others down, never stops them. Costs a read of the prefix per
    /// acquire, and a write after each handoff between processes. Every semaphore object on
    /// the prefix should use the same mode (docs/howto/semaphores.md).
    bool fair = false;
    /// Fair mode: how long a free slot is left to the contenders before this one.
    std::chrono::milliseconds fair_patience{1000};
    /// Resizable: the limit is the one `.lock` records, which semaphore::async_set_limit
    /// changes at run time; the object's own limit is only the first (when `.lock` does not
    /// exist yet). Without it, a limit other than the object's is errc::limit_conflict, as for
    /// Go's api.Semaphore, which sees a resized semaphore so too: give every participant of a
    /// resizable semaphore this option.
    bool resizable = false;

    semaphore_options& with_reentrant(bool v = true) { return set(reentrant, v); }
    semaphore_options& with_fair(bool v = true) { return set(fair, v); }
    semaphore_options& with_fair_patience(std::chrono::milliseconds v) {
        return set(fair_patience, v);
    }
    semaphore_options& with_resizable(bool v = true) { return set(resizable, v); }
    semaphore_options& with_diag(diagnostics* v) { return set(diag, v); }
};

/// One slot of a semaphore: a grant (conclave/grant.hpp) whose token has key
/// `<prefix>/.lock`, the session, and the ModifyIndex of the write that added this session to
/// the holders (ordered like a lock's tokens). It is lost when its session left the holder
/// set (pruned because its contender key vanished, or removed by someone), and its release
/// leaves the holder set (CAS on `.lock`, retried on races) and deletes the contender key.
/// Copies share the same grant.
class CONCLAVE_DECL permit : public grant {
public:
    /// No slot (valid() is false): assign one that an acquire completed with.
    permit() = default;

    /// How many of the semaphore's slots it holds (semaphore::async_acquire's `slots`); 0
    /// when empty.
    std::uint32_t slots() const noexcept;

private:
    friend struct detail::permit_factory;
    explicit permit(state_ptr s) noexcept
        : grant(std::move(s)) {}
};

/// A live holder of a semaphore's slot, as semaphore::async_status read it.
struct semaphore_holder {
    semaphore_holder() = default;
    semaphore_holder(std::string s, std::optional<std::string> v, std::uint32_t n = 1)
        : session(std::move(s))
        , slots(n)
        , value(std::move(v)) {}

    std::string session; ///< the holder's session ID
    /// How many slots it holds: 1 for a Go peer's holder (and `consul lock -n`'s).
    std::uint32_t slots = 1;
    /// What its contender key `<prefix>/<session>` holds (Go: SemaphoreOptions.Value); empty
    /// when that key does not exist (a holder is live while its session holds any key under
    /// the prefix, as Go's pruneDeadHolders counts it).
    std::optional<std::string> value;

    bool operator==(const semaphore_holder&) const = default;
};

/// Who holds a semaphore's slots and how many are free: one read of its prefix. Not an
/// aggregate (see conclave/consul/request.hpp).
struct semaphore_status {
    semaphore_status() = default;

    /// The limit `.lock` records, which equals the object's unless it is resizable (a
    /// different one is errc::limit_conflict otherwise); the object's when `.lock` does not
    /// exist yet.
    std::uint32_t limit = 0;
    /// The live holders, by session ID: those an acquire counts (listed in `.lock`, and
    /// their session holds a key under the prefix). Crashed holders still listed are left
    /// out.
    std::vector<semaphore_holder> holders;
    /// limit minus the slots the live holders hold, never below 0.
    std::uint32_t free_slots = 0;
    /// The ModifyIndex of `.lock` as read (0: no `.lock` yet). A permit granted by a later
    /// write has a greater token().modify_index.
    std::uint64_t lock_modify_index = 0;
};

/// A counting semaphore on a KV prefix, compatible with Consul's Go api.Semaphore and
/// `consul lock -n`: each contender holds `<prefix>/<session>` (acquired with its session,
/// flags 16210313421097356768), and `<prefix>/.lock` holds `{"Limit":N,"Holders":{...}}`,
/// changed only by check-and-set. A holder of one slot is listed as `true`, as Go lists it;
/// one of n > 1 slots (an acquire of n) as the number n, which Go peers cannot decode
/// ("lock decoding failed"): do not take more than one slot at once on a prefix Go peers or
/// `consul lock -n` use (see async_acquire(s, slots)). Holders whose session no longer
/// holds a key under the prefix are pruned. Every participant must use the same limit
/// (errc::limit_conflict otherwise, naming both in the diagnostics), unless all are
/// resizable (semaphore_options::resizable); a `.lock` with other flags is errc::conflict.
///
/// Crashed contenders: when a session ends without releasing (its holder killed, then its
/// TTL run out, or invalidated), Consul deletes its contender key only for behavior
/// `delete`; with `release` (session_config's default) the key stays, with no session, for
/// ever (Go's api.Semaphore leaves it there). An acquire that adds itself to the holders
/// deletes such keys in the same transaction as its check-and-set on `.lock`, each by
/// check-and-set at the ModifyIndex it read (a key written since fails the transaction,
/// which is retried on a fresh read): only direct children named like a session ID, with
/// the semaphore flags and no session; never `.lock`, a key with other flags, or a key a
/// session holds. At most 32 per transaction; none once Consul's ACLs refused such a delete
/// (the acquire then goes on without them).
class CONCLAVE_DECL semaphore {
public:
    /// A semaphore of `limit` slots under `prefix`, used through `c` (a copy of the handle is
    /// kept). Sends nothing: the prefix is read when a session acquires a slot. Throws
    /// boost::system::system_error (errc::invalid_argument) when `limit` is 0.
    semaphore(client& c, std::string prefix, std::uint32_t limit, semaphore_options opts = {});

    /// The KV prefix it lives under.
    const std::string& prefix() const noexcept;
    /// How many slots it was made with (a resizable semaphore's current limit is in
    /// async_status).
    std::uint32_t limit() const noexcept;

    /// Waits for a slot. `void(error_code, permit)`: errc::limit_conflict (the thrown
    /// error, with the default token, says "semaphore limit conflict (lock: X, local: Y)";
    /// with another token, semaphore_options::diag does), errc::conflict, the session's
    /// loss reason, errc::permission_denied, operation_aborted when cancelled. The contender
    /// key is deleted on every path that does not end with a permit (errors, cancellation).
    ///
    /// A session's second acquire waits for its first permit to end: one permit per session,
    /// as Go's layout has one contender key and one holder entry per session. So one session
    /// may serve many coroutines: while a permit of this process holds slots with `s`,
    /// another acquire with `s` waits for it to be released (which hands it the slots in the
    /// release's own transaction) or lost, and never gets a second permit of those slots.
    /// Slots held by `s` with no permit of this process left (a permit dropped without a
    /// release) are taken over without a write when they are as many as the acquire asks
    /// for; more are cut down to its count, fewer given back before it waits in line.
    template <class Token = default_token_t>
    requires(!std::is_arithmetic_v<std::remove_cvref_t<Token>> &&
             !std::is_enum_v<std::remove_cvref_t<Token>>) // (a count: the overload below)
        auto async_acquire(session& s, Token&& token = {}) {
        return async_acquire(s, 1, std::forward<Token>(token));
    }

    /// Waits for `slots` slots at once, all or nothing, held by one permit (permit::slots):
    /// it is granted when that many are free together, and its release frees them all. The
    /// acquires of one process are served first come, first served: a waiter asking for more
    /// than is free keeps the smaller ones behind it here waiting too, so they do not starve
    /// it. Across processes this holds only in fair mode, and only as far as each process
    /// knows: it counts each contender of another process as asking for one slot (the key
    /// layout does not say more), so a large acquire of another process can be overtaken by
    /// smaller ones. errc::invalid_argument at once, with nothing written, for 0 slots, more
    /// than the limit, or (re-entrant) more than the permit its session holds here; for a
    /// resizable semaphore, more than `.lock`'s limit is refused when it reaches the front.
    ///
    /// Not with Go peers: `.lock` lists a holder of n > 1 slots as the number n, which Go's
    /// api.Semaphore cannot decode ("lock decoding failed"). Its holders then lose their hold
    /// (`consul lock -n` stops its child), its releases fail and leave their entries until
    /// their sessions end, and its acquires fail, while such a permit is held. Go never counts
    /// the n slots as one.
    template <class Token = default_token_t>
    auto async_acquire(session& s, std::uint32_t slots, Token&& token = {}) {
        using sig = void(error_code, permit);
        return detail::initiate<sig>(token, &semaphore::acquire_impl, state_, s.state(), slots);
    }

    /// Like async_acquire within one monotonic budget: empty optional = no slot in time
    /// (with `s`'s own permit held here, none comes before it ends).
    template <class Token = default_token_t>
    auto async_try_acquire(session& s, std::chrono::milliseconds budget, Token&& token = {}) {
        return async_try_acquire(s, 1, budget, std::forward<Token>(token));
    }

    /// Like async_acquire(s, slots) within one monotonic budget: empty optional = not that
    /// many slots in time.
    template <class Token = default_token_t>
    auto async_try_acquire(session& s, std::uint32_t slots, std::chrono::milliseconds budget,
                           Token&& token = {}) {
        using sig = void(error_code, std::optional<permit>);
        return detail::initiate<sig>(token, &semaphore::try_acquire_impl, state_, s.state(), slots,
                                     budget);
    }

    /// Who holds the slots and how many are free (Curator's getParticipantNodes, Redisson's
    /// availablePermits): one read of the prefix, which neither waits nor writes, judged as
    /// an acquire judges it. `void(error_code, semaphore_status)`: errc::conflict when
    /// `.lock` carries other flags, errc::limit_conflict when it records another limit
    /// (described as an acquire describes it: the thrown error with the default token,
    /// semaphore_options::diag otherwise), errc::bad_response when `.lock` cannot be
    /// decoded, errc::permission_denied, the request's own errors. A snapshot: a slot
    /// reported free may be taken before an acquire gets to it. The token needs read access
    /// to the whole prefix: Consul leaves the keys it may not read out of the list, without
    /// an error, and holders whose keys it cannot see would look dead.
    template <class Token = default_token_t>
    auto async_status(Token&& token = {}) const {
        using sig = void(error_code, semaphore_status);
        return detail::initiate<sig>(token, &semaphore::status_impl, state_);
    }

    /// Sets the limit `.lock` records (check-and-set, retried after lost races; creates
    /// `.lock` when there is none), for a semaphore made with semaphore_options::resizable.
    /// Growing lets waiters in at once. Shrinking takes no permit away: nobody is admitted
    /// until the holders fit the new limit (they drain as they release). `void(error_code)`:
    /// errc::invalid_argument for 0 or without the option (nothing written), errc::conflict
    /// when `.lock` carries other flags, errc::bad_response when it cannot be decoded,
    /// errc::permission_denied, the request's own errors. Go peers and fixed-limit objects
    /// on the prefix then fail with errc::limit_conflict (Go: "semaphore limit conflict"),
    /// and their permits count as lost.
    template <class Token = default_token_t>
    auto async_set_limit(std::uint32_t limit, Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &semaphore::set_limit_impl, state_, limit);
    }

    /// Deletes `.lock` when no live holder remains (Go: Semaphore.Destroy); errc::conflict
    /// while in use or when its flags differ. Contender keys are not touched (the next
    /// acquire deletes those of crashed contenders).
    template <class Token = default_token_t>
    auto async_destroy(Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &semaphore::destroy_impl, state_);
    }

private:
    using state_ptr = std::shared_ptr<detail::semaphore_state>;
    using session_ptr = std::shared_ptr<detail::session_state>;
    static void acquire_impl(state_ptr, session_ptr, std::uint32_t, detail::diagnostics_route*,
                             asio::any_completion_handler<void(error_code, permit)>);
    static void
    try_acquire_impl(state_ptr, session_ptr, std::uint32_t, std::chrono::milliseconds,
                     detail::diagnostics_route*,
                     asio::any_completion_handler<void(error_code, std::optional<permit>)>);
    static void destroy_impl(state_ptr, asio::any_completion_handler<void(error_code)>);
    static void set_limit_impl(state_ptr, std::uint32_t,
                               asio::any_completion_handler<void(error_code)>);
    static void status_impl(state_ptr, detail::diagnostics_route*,
                            asio::any_completion_handler<void(error_code, semaphore_status)>);

    state_ptr state_;
};

} // namespace conclave
