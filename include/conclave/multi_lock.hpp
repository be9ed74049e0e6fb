// SPDX-License-Identifier: BSL-1.0
/// \file
/// Several locks taken together or not at all, each an api.Lock key: class multi_lock.
#pragma once

#include <conclave/acquire_options.hpp>
#include <conclave/detail/export.hpp>
#include <conclave/grant.hpp>
#include <conclave/session.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace conclave {

namespace detail {
struct multi_lock_state;
struct multi_lease_factory;
} // namespace detail

/// How a multi_lock waits and watches its keys. Not an aggregate (see
/// conclave/consul/request.hpp): set fields with the with_* calls.
struct multi_lock_options : acquire_options<multi_lock_options> {
    multi_lock_options() = default;

    /// Bound of one wait after an acquire was refused by a key's lock-delay.
    std::chrono::milliseconds max_lock_delay_wait{1000};

    multi_lock_options& with_max_lock_delay_wait(std::chrono::milliseconds v) {
        return set(max_lock_delay_wait, v);
    }
};

/// The keys of a multi_lock, held together: a grant (conclave/grant.hpp) with one fencing
/// token for the set. The token's key is the first of the keys in order; its modify_index is
/// the Raft index of the transaction that took them all, so it is ordered against every
/// grant of any of these keys (a lock's, or another multi-lock's): a fence can guard a
/// resource by one of the keys. lock_index is that first key's LockIndex.
///
/// It is lost when any of its keys changes hands (released, deleted or taken by someone
/// else), or its session ends. Its release unlocks every key still held in one transaction.
/// Copies share the same grant.
class CONCLAVE_DECL multi_lock_lease : public grant {
public:
    /// No grant (valid() is false): assign one that an acquire completed with.
    multi_lock_lease() = default;

    /// The fencing pattern for the set: runs `ops` in one /v1/txn that first checks that
    /// every key is still held by this grant's session, so nothing is written once any of
    /// them changed hands. `void(error_code, txn_result)`: errc::lock_lost (and the grant
    /// counts as lost) when a check failed; otherwise Consul's outcome of the transaction.
    /// The checks count in Consul's limit of 64 operations: at most 64 minus the number of
    /// keys (errc::invalid_argument beyond, sending nothing).
    template <class Token = default_token_t>
    auto async_guarded_txn(std::vector<txn_op> ops, Token&& token = {}) const {
        return detail::initiate<void(error_code, txn_result)>(
            token, &multi_lock_lease::guarded_txn_impl, state_, std::move(ops));
    }

private:
    friend struct detail::multi_lease_factory;
    explicit multi_lock_lease(state_ptr s) noexcept
        : grant(std::move(s)) {}
    static void guarded_txn_impl(state_ptr s, std::vector<txn_op> ops,
                                 asio::any_completion_handler<void(error_code, txn_result)> h);
};

/// Up to 32 locks taken at once, all or none (Curator's InterProcessMultiLock, Redisson's
/// MultiLock), in one /v1/txn: while any key is held by another session the acquire waits
/// for a change of the keys, then tries all of them again. No partial hold is ever written,
/// so two multi-locks over the same keys in any order cannot deadlock.
///
/// Each key is an api.Lock key (flags 3304740253564472344, the value, the session), so a
/// conclave::lock, a Go api.Lock or `consul lock` on any one of the keys excludes the set,
/// and a key with other flags (a semaphore's, a foreign key) is errc::conflict. 32 is what
/// fits Consul's 64 operations per transaction: a check and a lock per key.
///
/// Multi-locks of one client over shared keys are served in the order they came (an older
/// acquire that could take its keys now goes first; one waiting for a key held elsewhere
/// holds nobody back). A multi-lock does not queue behind the local waiters of a
/// conclave::lock on one of its keys: it tries whenever all its keys are free, and keys in
/// steady demand one by one may keep it waiting (it has no fair mode).
///
/// Thread safety: lives on its client's executor.
class CONCLAVE_DECL multi_lock {
public:
    /// The most keys one multi-lock takes.
    static constexpr std::size_t max_keys = 32;

    /// A lock on every key of `keys`, used through `c` (a copy of the handle is kept). Sends
    /// nothing. Throws boost::system::system_error (errc::invalid_argument) for no key, more
    /// than max_keys, an empty key, or a key given twice.
    multi_lock(client& c, std::vector<std::string> keys, multi_lock_options opts = {});

    /// The keys, in ascending order.
    const std::vector<std::string>& keys() const noexcept;

    /// Waits until every key is held by `s`, taken in one transaction. Completes with
    /// `void(error_code, multi_lock_lease)`: errc::conflict (a key with other flags), the
    /// session's loss reason when it was lost while waiting, errc::permission_denied when
    /// Consul's ACLs refuse the token a read or the write, operation_aborted when cancelled.
    /// Cancellation at any point leaves none of the keys held.
    ///
    /// While a grant of this process (a lock lease, another multi-lock's) holds one of the
    /// keys with `s`, the acquire waits for it to end, as with another session. Keys all
    /// held by `s` with no grant of this process left are taken over without a write.
    template <class Token = default_token_t>
    auto async_acquire(session& s, Token&& token = {}) {
        return detail::initiate<void(error_code, multi_lock_lease)>(
            token, &multi_lock::acquire_impl, state_, s.state());
    }

    /// Like async_acquire, within one monotonic `budget`: an empty optional means "not all
    /// acquired in time" (not an error). A budget of 0 looks once at the keys and, when all
    /// are free and no older acquire of this process over them could go first, makes one
    /// attempt.
    template <class Token = default_token_t>
    auto async_try_acquire(session& s, std::chrono::milliseconds budget, Token&& token = {}) {
        using sig = void(error_code, std::optional<multi_lock_lease>);
        return detail::initiate<sig>(token, &multi_lock::try_acquire_impl, state_, s.state(),
                                     budget);
    }

private:
    using state_ptr = std::shared_ptr<detail::multi_lock_state>;
    using session_ptr = std::shared_ptr<detail::session_state>;
    static void acquire_impl(state_ptr, session_ptr, detail::diagnostics_route*,
                             asio::any_completion_handler<void(error_code, multi_lock_lease)>);
    static void try_acquire_impl(
        state_ptr, session_ptr, std::chrono::milliseconds, detail::diagnostics_route*,
        asio::any_completion_handler<void(error_code, std::optional<multi_lock_lease>)>);

    state_ptr state_;
};

} // namespace conclave
