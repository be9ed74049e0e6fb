// SPDX-License-Identifier: BSL-1.0
/// \file
/// What every grant (a lock lease, a semaphore permit, a term of leadership) offers: class
/// grant, and the fencing token that names a grant.
#pragma once

#include <conclave/detail/export.hpp>
#include <conclave/session.hpp>

#include <chrono>
#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace conclave {

namespace detail {
struct grant_state;
} // namespace detail

/// Identifies one grant of a lock. Grants of the same key are ordered by `modify_index`
/// (the Raft index of the acquiring write): a later grant always has a larger one, so a
/// store that remembers the largest token it has seen can refuse writes from a holder that
/// lost the lock (the fencing pattern). Not an aggregate (see conclave/consul/request.hpp):
/// a `fencing_token{}` argument in a co_await expression is then safe with g++ 12.
struct CONCLAVE_DECL fencing_token {
    /// An empty token (modify_index 0), which no fence admits.
    fencing_token() = default;
    /// The token of the grant of `key_` to `session_` by the write at `modify_index_`.
    fencing_token(std::string key_, std::string session_, std::uint64_t lock_index_,
                  std::uint64_t modify_index_)
        : key(std::move(key_))
        , session(std::move(session_))
        , lock_index(lock_index_)
        , modify_index(modify_index_) {}

    std::string key;                ///< the lock's key
    std::string session;            ///< the session that acquired it
    std::uint64_t lock_index = 0;   ///< Consul's LockIndex after the acquire
    std::uint64_t modify_index = 0; ///< ModifyIndex of the acquiring write

    bool operator==(const fencing_token&) const = default;
    /// "<modify_index>:<lock_index>:<session>:<key>" (modify_index first so that tokens of
    /// one key compare in grant order as numbers).
    std::string to_string() const;
};

/// A grant held with a session: a lock_lease, a permit or a leadership, each of which is a
/// grant (so code that only watches or ends a grant can take a `const grant&`). Copies
/// share the same grant.
///
/// Its life: held (health() says how far it can be trusted) until it is released by
/// async_release or lost (its key changed hands, its session ended or passed its local
/// deadline); async_wait_lost completes at the loss. The hold scopes
/// (conclave/hold_scope.hpp) do all of this around a body.
class CONCLAVE_DECL grant {
public:
    /// No grant (valid() is false): assign one that an acquire completed with.
    grant() = default;

    /// False for a default-constructed grant.
    bool valid() const noexcept { return state_ != nullptr; }
    /// The grant's fencing token (also after it ended: it names the grant). For a permit:
    /// key = `<prefix>/.lock`, and the ModifyIndex of the write that added the session to
    /// the holders. Requires valid().
    const fencing_token& token() const noexcept;
    /// The token while this process may still consider the grant held: not released, not
    /// seen lost, and the session's local deadline not passed. Synchronous, no I/O.
    std::optional<fencing_token> held() const;

    /// held, jeopardy (its session's renewals failing or late) or lost, now; lost once
    /// released or seen lost. Synchronous, no I/O: a change of the key is seen only while
    /// async_wait_lost (or a hold scope) watches it.
    hold_health health() const;
    /// Time left before the session's local deadline (zero once lost or released): how
    /// long this grant may still be trusted if no renewal succeeds.
    std::chrono::steady_clock::duration remaining() const;
    /// How many acquires this grant stands for: 1, or more when re-entrant acquires
    /// (lock_options::reentrant, semaphore_options::reentrant) joined it; each release
    /// counts one down, and only the last one ends the grant. 0 once that last release
    /// began (and for an empty grant).
    unsigned hold_count() const noexcept;

    /// Completes when the grant is lost: errc::lock_lost when its key changed owner, was
    /// deleted or released, or (a permit) its session left the holder set, or when the key
    /// could not be read for the recipe's monitor_retries tries; the session's loss reason
    /// when it was lost (errc::session_invalidated) or its local deadline passed
    /// (errc::session_expired). Never completes with success. operation_aborted when
    /// cancelled.
    template <class Token = default_token_t>
    auto async_wait_lost(Token&& token = {}) const {
        return detail::initiate<void(error_code)>(token, &grant::wait_lost_impl, state_);
    }

    /// Completes as soon as health() differs from `seen`, with the new health
    /// (`void(error_code, hold_health)`). For example, from held, when renewals start
    /// failing, so that no new work is started on a grant that may not outlive it. See
    /// session::async_wait_health_change.
    template <class Token = default_token_t>
    auto async_wait_health_change(hold_health seen, Token&& token = {}) const {
        return detail::initiate<void(error_code, hold_health)>(
            token, &grant::wait_health_change_impl, state_, seen);
    }

    /// Ends the grant, or, while re-entrant acquires hold it more than once (hold_count() >
    /// 1), counts one hold down and completes at once. A lock keeps its flags and value, so Go
    /// clients still recognise it; a permit leaves the holder set and deletes its contender key.
    /// Retry-safe: releasing a grant that is no longer held succeeds; on a transport error the
    /// grant stays held and the call can be repeated. Once its session was handed over
    /// (session::hand_over), completes at once with nothing sent: the successor holds it.
    template <class Token = default_token_t>
    auto async_release(Token&& token = {}) const {
        return detail::initiate<void(error_code)>(token, &grant::release_impl, state_);
    }

protected:
    using state_ptr = std::shared_ptr<detail::grant_state>;
    explicit grant(state_ptr s) noexcept
        : state_(std::move(s)) {}

    state_ptr state_;

private:
    static void wait_lost_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h);
    static void release_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h);
    static void
    wait_health_change_impl(state_ptr s, hold_health seen,
                            asio::any_completion_handler<void(error_code, hold_health)> h);
};

} // namespace conclave
