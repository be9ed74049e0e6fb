// SPDX-License-Identifier: BSL-1.0
/// \file
/// Many readers or one writer across processes and hosts: class read_write_lock.
#pragma once

#include <conclave/acquire_options.hpp>
#include <conclave/detail/export.hpp>
#include <conclave/grant.hpp>
#include <conclave/session.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace conclave {

namespace detail {
struct rwlock_state;
struct rw_lease_factory;
} // namespace detail

/// How a read_write_lock waits and watches a held grant. Not an aggregate (see
/// conclave/consul/request.hpp): set fields with the with_* calls.
struct read_write_lock_options : acquire_options<read_write_lock_options> {
    read_write_lock_options() = default;
};

/// A held read or write grant of a read_write_lock (conclave/grant.hpp). Its token's key is
/// the grant's contender key (which its session holds: async_fenced_put checks it); its
/// modify_index is the Raft index of the state that let it in (past the release of everyone
/// before it), or of its upgrade or downgrade, so a writer's token is above that of every
/// reader that held before it, and of every earlier writer. Lost when its contender key is
/// deleted or released, or its session ends; dropped without a release, its contender key
/// is deleted in the background. Copies share the grant.
class CONCLAVE_DECL read_write_lease : public grant {
public:
    /// No grant (valid() is false): assign one that an acquire completed with.
    read_write_lease() = default;

    /// True for a write grant (after an upgrade too), false for a read grant. Requires valid().
    bool writing() const noexcept;

    /// Makes this read grant the write grant without letting go of the lock: possible when it
    /// is the only reader holding (readers waiting behind a writer do not count), waited for
    /// within `budget` (0: now or not). `void(error_code, bool)`: true when it is now the
    /// writer (its token then names the upgrade), false when other readers held it
    /// throughout the budget (it is still a read grant). Two readers that both try to upgrade
    /// cannot deadlock: each keeps its read grant and gets false. A write grant: true at once.
    /// errc::lock_lost when the grant was lost.
    template <class Token = default_token_t>
    auto async_try_upgrade(std::chrono::milliseconds budget, Token&& token = {}) const {
        return detail::initiate<void(error_code, bool)>(token, &read_write_lease::upgrade_impl,
                                                        state_, budget);
    }

    /// Makes this write grant a read grant without letting go of the lock, in one
    /// transaction: the readers waiting behind it may then hold too. A read grant: success at
    /// once. errc::lock_lost when the grant was lost.
    template <class Token = default_token_t>
    auto async_downgrade(Token&& token = {}) const {
        return detail::initiate<void(error_code)>(token, &read_write_lease::downgrade_impl, state_);
    }

private:
    friend struct detail::rw_lease_factory;
    explicit read_write_lease(state_ptr s) noexcept
        : grant(std::move(s)) {}
    static void upgrade_impl(state_ptr s, std::chrono::milliseconds budget,
                             asio::any_completion_handler<void(error_code, bool)> h);
    static void downgrade_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h);
};

/// Many readers or one writer (Curator's InterProcessReadWriteLock, Redisson's
/// RReadWriteLock, std::shared_mutex across hosts). Readers and writers are served in the
/// order they came, readers together: a reader holds once nobody before it writes or waits
/// to write, a writer once everyone before it has gone. So a writer is not starved by
/// readers that keep coming, and no two acquires can wait for each other.
///
/// Layout (under the key, which itself is not written): every acquire writes a contender
/// key `<key>/.rwlock/<session>.<n>`, held by its session (it goes when the session ends),
/// with flags 0x72776c6f636b5244 (read) or 0x72776c6f636b5752 (write) and the options'
/// value, and in the same transaction rewrites `<key>/.rwlock` (flags 0x72776c6f636b5351),
/// whose ModifyIndex tells an upgrade that nobody came meanwhile. The order is the
/// contender keys' CreateIndex. A key a lock uses (`<key>` with api.Lock's flags), a
/// semaphore or `consul lock` on `<key>` (`<key>/.lock`), or other flags under
/// `<key>/.rwlock` are errc::conflict.
///
/// Thread safety: lives on its client's executor.
class CONCLAVE_DECL read_write_lock {
public:
    /// A read-write lock on `key`, used through `c` (a copy of the handle is kept). Sends
    /// nothing. Throws boost::system::system_error (errc::invalid_argument) for an empty key.
    read_write_lock(client& c, std::string key, read_write_lock_options opts = {});

    /// The key the lock lives under.
    const std::string& key() const noexcept;

    /// Waits until `s` may read: no writer holds or waits before it. Completes with
    /// `void(error_code, read_write_lease)`: errc::conflict, the session's loss reason,
    /// errc::permission_denied, operation_aborted when cancelled; on every path that does not
    /// end with a grant, the contender key is deleted. A session that holds a read grant
    /// and asks for the write grant waits for itself: use async_try_upgrade.
    template <class Token = default_token_t>
    auto async_acquire_read(session& s, Token&& token = {}) {
        return detail::initiate<void(error_code, read_write_lease)>(
            token, &read_write_lock::acquire_impl, state_, s.state(), false);
    }
    /// Waits until `s` alone may write: everyone who came before it has gone. As
    /// async_acquire_read otherwise.
    template <class Token = default_token_t>
    auto async_acquire_write(session& s, Token&& token = {}) {
        return detail::initiate<void(error_code, read_write_lease)>(
            token, &read_write_lock::acquire_impl, state_, s.state(), true);
    }

    /// async_acquire_read within one monotonic `budget`: an empty optional means "not had in
    /// time" (not an error). 0: held now, or not.
    template <class Token = default_token_t>
    auto async_try_acquire_read(session& s, std::chrono::milliseconds budget, Token&& token = {}) {
        using sig = void(error_code, std::optional<read_write_lease>);
        return detail::initiate<sig>(token, &read_write_lock::try_acquire_impl, state_, s.state(),
                                     false, budget);
    }
    /// async_acquire_write within one monotonic `budget`.
    template <class Token = default_token_t>
    auto async_try_acquire_write(session& s, std::chrono::milliseconds budget, Token&& token = {}) {
        using sig = void(error_code, std::optional<read_write_lease>);
        return detail::initiate<sig>(token, &read_write_lock::try_acquire_impl, state_, s.state(),
                                     true, budget);
    }

private:
    using state_ptr = std::shared_ptr<detail::rwlock_state>;
    using session_ptr = std::shared_ptr<detail::session_state>;
    static void acquire_impl(state_ptr, session_ptr, bool write, detail::diagnostics_route*,
                             asio::any_completion_handler<void(error_code, read_write_lease)>);
    static void try_acquire_impl(
        state_ptr, session_ptr, bool write, std::chrono::milliseconds, detail::diagnostics_route*,
        asio::any_completion_handler<void(error_code, std::optional<read_write_lease>)>);

    state_ptr state_;
};

} // namespace conclave
