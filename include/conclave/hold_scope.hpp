// SPDX-License-Identifier: BSL-1.0
// Structured hold scopes: with_lock, with_permit, with_leadership.
//
//     co_await conclave::with_lock(mutex, s, [&](conclave::lock_lease lease) ->
//     asio::awaitable<void> {
//         co_await write_report(lease.token());   // cancelled if the lock is lost
//     });
//
// The code around a grant that users otherwise get wrong: stop the work the moment the grant
// is lost, and release it however the work ends.
#pragma once

#include <conclave/detail/hold_scope.hpp>
#include <conclave/elector.hpp>
#include <conclave/lock.hpp>
#include <conclave/semaphore.hpp>
#include <conclave/session.hpp>

namespace conclave {

/// Acquires `mutex` with `s`, runs `body(lease)` (a callable returning an asio::awaitable),
/// and releases the lock after the body ends, however it ends. Returns the body's value or
/// rethrows its exception.
///
/// When the lock is lost while the body runs, the body is cancelled (terminal cancellation:
/// its next co_await throws operation_aborted) and with_lock, once the body has returned,
/// throws conclave::error with the loss reason: errc::lock_lost, errc::session_invalidated or
/// errc::session_expired, never operation_aborted, so a loss is told apart from the caller's
/// own cancellation.
///
/// Cancelling with_lock: while acquiring, the acquire ends with the lock not held; while the
/// body runs, the body is cancelled and the lock released after it returned. The release
/// itself is not interrupted (one request, bounded by the client's request timeout); if it
/// fails (Consul unreachable), it is retried in the background until it succeeds or the
/// session ends, so the key is never left held by a session that keeps renewing.
/// Acquire errors are async_acquire's.
template <class Body>
asio::awaitable<detail::body_result_t<Body, lock_lease>> with_lock(lock& mutex, session& s,
                                                                   Body body) {
    lock_lease lease = co_await mutex.async_acquire(s);
    co_return co_await detail::hold(s, lease, lease, body, "the lock was lost while it was held");
}

/// with_lock for one slot of a semaphore: `body(permit)`.
template <class Body>
asio::awaitable<detail::body_result_t<Body, permit>> with_permit(semaphore& sem, session& s,
                                                                 Body body) {
    permit p = co_await sem.async_acquire(s);
    co_return co_await detail::hold(s, p, p, body, "the permit was lost while it was held");
}

/// with_lock for one term of leadership: campaigns with `s` (elector::async_campaign), runs
/// `body(leadership)` while leading, steps down after it ends. For a process that should
/// lead again after each term, elector::async_run campaigns in a loop.
template <class Body>
asio::awaitable<detail::body_result_t<Body, leadership>> with_leadership(elector& e, session& s,
                                                                         Body body) {
    leadership term = co_await e.async_campaign(s);
    co_return co_await detail::hold(s, term.lease(), term, body,
                                    "leadership was lost during the term");
}

} // namespace conclave
