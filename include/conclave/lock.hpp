// SPDX-License-Identifier: BSL-1.0
/// \file
/// Mutual exclusion across processes and hosts, with Consul's Go api.Lock layout: class lock.
#pragma once

#include <conclave/acquire_options.hpp>
#include <conclave/detail/export.hpp>
#include <conclave/grant.hpp>
#include <conclave/session.hpp>

#include <chrono>
#include <compare>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace conclave {

namespace detail {
struct lock_state;
struct lease_factory;
} // namespace detail

/// How a lock waits, watches a held key and serves its waiters. Not an aggregate (see
/// conclave/consul/request.hpp): set fields with the with_* calls.
struct lock_options : acquire_options<lock_options> {
    lock_options() = default;

    /// Bound of one wait after an acquire was refused by the key's lock-delay (the
    /// remaining delay is unknown to clients: waits double from 25 ms up to this).
    std::chrono::milliseconds max_lock_delay_wait{1000};
    /// Fair mode: waiters in every process are served in arrival order. Each waiter writes
    /// a contender key `<key>/.queue/<session>.<n>` (held by its session) and tries only
    /// when its key is the oldest live one (smallest CreateIndex). Costs one more write per
    /// acquire. Without it, waiters of one process are served in arrival order, but
    /// processes race for the key when it is released (see local_turn).
    bool fair = false;
    /// Without fair mode: how many grants in a row this process may take (its waiters
    /// handing the key to each other, or taking it again right after releasing it) while
    /// it has not seen another process hold the key. The release that ends the turn hands
    /// the key to nobody, and this process's waiters then leave it to the others for
    /// twice that release's round trip: a waiter of another process, woken by the release,
    /// takes it meanwhile, or the turn starts again. 0: turns never end (a busy process
    /// can then keep the key from the others indefinitely, as with Go's api.Lock).
    unsigned local_turn = 32;
    /// Fair mode: the value of the contender a release hands the key to first, when it waits
    /// (here or in another process), ahead of older contenders. How the elector hands
    /// leadership to its preferred candidate (elector_options::preferred).
    std::string preferred;
    /// Re-entrant: an acquire with a session whose lease of this key is held in this process
    /// gets that lease at once, one more hold of it (grant::hold_count), with no request;
    /// each acquire is matched by one release, and only the last release frees the key.
    /// For code that may take a lock it already holds, down one call chain. Without it, that
    /// acquire waits for the held lease to end, so two coroutines sharing a session still
    /// exclude each other. Holds of one lease are not exclusive among themselves: give it
    /// only to code on one logical thread of work.
    bool reentrant = false;

    lock_options& with_fair(bool v = true) { return set(fair, v); }
    lock_options& with_preferred(std::string v) { return set(preferred, std::move(v)); }
    lock_options& with_local_turn(unsigned grants) { return set(local_turn, grants); }
    lock_options& with_reentrant(bool v = true) { return set(reentrant, v); }
    lock_options& with_max_lock_delay_wait(std::chrono::milliseconds v) {
        return set(max_lock_delay_wait, v);
    }
};

/// A held lock: a grant (token, held, health, remaining, async_wait_lost,
/// async_wait_health_change, async_release; see conclave/grant.hpp) that can also guard
/// writes. Copies share the same grant.
class CONCLAVE_DECL lock_lease : public grant {
public:
    /// No grant (valid() is false): assign one that an acquire completed with.
    lock_lease() = default;

    /// The fencing pattern: runs `ops` in one /v1/txn that first checks the lock's key is
    /// still held by this lease's session (check-session), so nothing is written once the
    /// lock changed hands. Completes with `void(error_code, txn_result)`: errc::lock_lost
    /// (and the lease counts as lost) when that check failed; otherwise Consul's outcome of
    /// the transaction (`committed == false` with the errors of `ops` if one of them failed).
    /// At most 63 ops (Consul's limit of 64 includes the check).
    template <class Token = default_token_t>
    auto async_guarded_txn(std::vector<txn_op> ops, Token&& token = {}) const {
        return detail::initiate<void(error_code, txn_result)>(token, &lock_lease::guarded_txn_impl,
                                                              state_, std::move(ops));
    }

private:
    friend struct detail::lease_factory;
    explicit lock_lease(state_ptr s) noexcept
        : grant(std::move(s)) {}
    static void guarded_txn_impl(state_ptr s, std::vector<txn_op> ops,
                                 asio::any_completion_handler<void(error_code, txn_result)> h);
};

/// A lock on one key, compatible with Consul's Go api.Lock and `consul lock`: the key holds
/// the value, is acquired with the holder's session and carries flags 3304740253564472344.
/// A key with other flags (a semaphore, a foreign key) is errc::conflict.
///
/// Thread safety: lives on its client's executor.
class CONCLAVE_DECL lock {
public:
    /// A lock on `key`, used through `c` (a copy of the handle is kept). Sends nothing: the
    /// key is read when a session acquires it.
    lock(client& c, std::string key, lock_options opts = {});

    /// The key the lock guards.
    const std::string& key() const noexcept;

    /// Waits until the lock is held by `s`. Completes with `void(error_code, lock_lease)`:
    /// errc::conflict, the session's loss reason (errc::session_invalidated or
    /// errc::session_expired) when it was lost while waiting, errc::permission_denied when
    /// Consul's ACLs refuse the token a read or a write of the key (the thrown error, with
    /// the default token, says which), operation_aborted when cancelled. Cancellation at any
    /// point leaves the lock not held.
    ///
    /// One session may serve many coroutines: while a lease of this process holds the key
    /// with `s`, another acquire with `s` waits for it to be released (which hands it the
    /// key in the release's own transaction) or lost, as an acquire with another session
    /// would. A key held by `s` with no lease of this process left (a lease dropped
    /// without a release) is taken over without a write.
    template <class Token = default_token_t>
    auto async_acquire(session& s, Token&& token = {}) {
        return detail::initiate<void(error_code, lock_lease)>(token, &lock::acquire_impl, state_,
                                                              s.state());
    }

    /// Like async_acquire, within one monotonic `budget`: an empty optional means "not
    /// acquired in time" (not an error).
    template <class Token = default_token_t>
    auto async_try_acquire(session& s, std::chrono::milliseconds budget, Token&& token = {}) {
        using sig = void(error_code, std::optional<lock_lease>);
        return detail::initiate<sig>(token, &lock::try_acquire_impl, state_, s.state(), budget);
    }

    /// Deletes the lock's key when nobody holds it (Go: Lock.Destroy). errc::conflict if it
    /// is held or carries other flags; success if it does not exist.
    template <class Token = default_token_t>
    auto async_destroy(Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &lock::destroy_impl, state_);
    }

private:
    using state_ptr = std::shared_ptr<detail::lock_state>;
    using session_ptr = std::shared_ptr<detail::session_state>;
    static void acquire_impl(state_ptr, session_ptr, detail::diagnostics_route*,
                             asio::any_completion_handler<void(error_code, lock_lease)>);
    static void
    try_acquire_impl(state_ptr, session_ptr, std::chrono::milliseconds, detail::diagnostics_route*,
                     asio::any_completion_handler<void(error_code, std::optional<lock_lease>)>);
    static void destroy_impl(state_ptr, asio::any_completion_handler<void(error_code)>);

    state_ptr state_;
};

} // namespace conclave
