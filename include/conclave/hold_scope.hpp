// SPDX-License-Identifier: BSL-1.0
/// \file
/// Structured scopes: with_session, with_lock (a lock, or a multi-lock's keys together),
/// with_read_lock and with_write_lock (a read-write lock), with_permit, with_leadership,
/// with_membership, and the try_with_* forms, which skip the body when the grant is held
/// elsewhere.
///
///     co_await conclave::with_lock(mutex, s,
///         [&](conclave::lock_lease lease) -> asio::awaitable<void> {
///             co_await write_report(lease.token());   // cancelled if the lock is lost
///         });
///
/// The code around a grant that users otherwise get wrong: stop the work the moment the grant
/// is lost, and release it however the work ends.
#pragma once

#include <conclave/detail/hold_scope.hpp>
#include <conclave/elector.hpp>
#include <conclave/group.hpp>
#include <conclave/lock.hpp>
#include <conclave/multi_lock.hpp>
#include <conclave/read_write_lock.hpp>
#include <conclave/semaphore.hpp>
#include <conclave/session.hpp>

namespace conclave {

/// Creates a session on `c`, runs `body(session)` (a callable returning an asio::awaitable)
/// while the session is renewed beside it, and destroys the session after the body ends,
/// however it ends. Returns the body's value or rethrows its exception, after the destroy.
///
///     co_await conclave::with_session(consul, conclave::session_config{}.with_ttl(10s),
///         [&](conclave::session& s) -> asio::awaitable<void> {
///             co_await conclave::with_lock(mutex, s, work);
///         });
///
/// When the session is lost (Consul invalidated it, or its local deadline passed with no
/// renewal), the body is cancelled (its next co_await throws operation_aborted) and, once it
/// has returned, with_session throws conclave::error with the loss reason
/// (errc::session_invalidated or errc::session_expired; errc::session_handed_over after
/// session::hand_over), never operation_aborted.
///
/// Cancelling with_session cancels the body; the session is destroyed after it returned,
/// and with_session throws operation_aborted unless the body had already returned a value.
/// The destroy is awaited, bounded by `cfg.destroy_timeout`; when Consul cannot confirm it,
/// it is retried in the background and the session's TTL ends it anyway. The scope runs as
/// a coroutine of its own on the caller's executor. Errors of the create are
/// session::async_create's.
template <class Body>
asio::awaitable<detail::body_result_t<Body, session>> with_session(client& c, session_config cfg,
                                                                   Body body) {
    return detail::spawn_hold<detail::body_result_t<Body, session>>(
        detail::session_scope(c, std::move(cfg), std::move(body)));
}

/// Acquires `mutex` with `s`, runs `body(lease)` (a callable returning an asio::awaitable),
/// and releases the lock after the body ends, however it ends. Returns the body's value or
/// rethrows its exception. `mutex` and `s` must outlive the returned awaitable.
///
/// When the lock is lost while the body runs, the body is cancelled (terminal cancellation:
/// its next co_await throws operation_aborted) and with_lock, once the body has returned,
/// throws conclave::error with the loss reason: errc::lock_lost, errc::session_invalidated or
/// errc::session_expired, never operation_aborted, so a loss is told apart from the caller's
/// own cancellation. What the body did meanwhile is unknown: fence its writes.
///
/// Cancelling with_lock: while acquiring, the acquire ends with the lock not held; once it is
/// held, the body is cancelled (or not started) and the lock released after it returned;
/// with_lock then throws operation_aborted, unless the body had already returned a value.
/// The release is not interrupted; while Consul cannot be reached it is retried, with pauses
/// from 250 ms doubling to 8 s, until it succeeds or the session is lost. The scope runs as a
/// coroutine of its own on the caller's executor: the caller's cancellation settings are
/// left as they were. Acquire errors are async_acquire's.
template <class Body>
asio::awaitable<detail::body_result_t<Body, lock_lease>> with_lock(lock& mutex, session& s,
                                                                   Body body) {
    return detail::hold_scope<lock_lease>(
        s, std::move(body), "the lock was lost while it was held",
        [&mutex, s](auto token) mutable { return mutex.async_acquire(s, std::move(token)); });
}

/// with_lock for `slots` slots of a semaphore at once (semaphore::async_acquire(s, slots)):
/// `body(permit)`.
template <class Body>
asio::awaitable<detail::body_result_t<Body, permit>> with_permit(semaphore& sem, session& s,
                                                                 std::uint32_t slots, Body body) {
    return detail::hold_scope<permit>(s, std::move(body), "the permit was lost while it was held",
                                      [&sem, s, slots](auto token) mutable {
                                          return sem.async_acquire(s, slots, std::move(token));
                                      });
}

/// with_lock for one slot of a semaphore: `body(permit)`.
template <class Body>
asio::awaitable<detail::body_result_t<Body, permit>> with_permit(semaphore& sem, session& s,
                                                                 Body body) {
    return with_permit(sem, s, 1, std::move(body));
}

/// with_lock for a lock that may be held elsewhere: tries to acquire `mutex` within
/// `budget` (0: one attempt, without waiting), and only if that got it runs
/// `body(lease)` as with_lock does: cancelled with errc::lock_lost (or the session's loss
/// reason) thrown after it returned if the lock is lost meanwhile, the release awaited
/// however the body ends, the body's exception rethrown after the release.
///
/// Returns the body's value in a std::optional, empty when the lock was not had within the
/// budget; for a body returning void, a bool: whether it ran.
///
///     bool ran = co_await conclave::try_with_lock(mutex, s, 0ms,
///         [&](conclave::lock_lease lease) -> asio::awaitable<void> { co_await run(task); });
///     // ran == false: another worker holds the task; skip it.
template <class Body>
asio::awaitable<detail::try_result_t<detail::body_result_t<Body, lock_lease>>>
try_with_lock(lock& mutex, session& s, std::chrono::milliseconds budget, Body body) {
    return detail::try_hold_scope<lock_lease>(
        s, std::move(body), "the lock was lost while it was held",
        [&mutex, s, budget](auto token) mutable {
            return mutex.async_try_acquire(s, budget, std::move(token));
        });
}

/// with_lock for every key of a multi-lock, taken together: `body(lease)` runs while all are
/// held, and is cancelled (errc::lock_lost thrown after it returned) when any of them is
/// lost; the release unlocks them all in one transaction.
template <class Body>
asio::awaitable<detail::body_result_t<Body, multi_lock_lease>> with_lock(multi_lock& keys,
                                                                         session& s, Body body) {
    return detail::hold_scope<multi_lock_lease>(
        s, std::move(body), "a key of the multi-lock was lost while it was held",
        [&keys, s](auto token) mutable { return keys.async_acquire(s, std::move(token)); });
}

/// try_with_lock for a multi-lock: `body(lease)` runs only if every key was had within
/// `budget` (0: one look, and one attempt when all are free).
template <class Body>
asio::awaitable<detail::try_result_t<detail::body_result_t<Body, multi_lock_lease>>>
try_with_lock(multi_lock& keys, session& s, std::chrono::milliseconds budget, Body body) {
    return detail::try_hold_scope<multi_lock_lease>(
        s, std::move(body), "a key of the multi-lock was lost while it was held",
        [&keys, s, budget](auto token) mutable {
            return keys.async_try_acquire(s, budget, std::move(token));
        });
}

/// with_lock for a read grant of a read-write lock: `body(lease)` runs while `s` may read
/// (other readers may too, no writer), with the same behaviour as with_lock.
template <class Body>
asio::awaitable<detail::body_result_t<Body, read_write_lease>>
with_read_lock(read_write_lock& rw, session& s, Body body) {
    return detail::hold_scope<read_write_lease>(
        s, std::move(body), "the read lock was lost while it was held",
        [&rw, s](auto token) mutable { return rw.async_acquire_read(s, std::move(token)); });
}

/// with_lock for the write grant of a read-write lock: `body(lease)` runs while `s` alone
/// may write.
template <class Body>
asio::awaitable<detail::body_result_t<Body, read_write_lease>>
with_write_lock(read_write_lock& rw, session& s, Body body) {
    return detail::hold_scope<read_write_lease>(
        s, std::move(body), "the write lock was lost while it was held",
        [&rw, s](auto token) mutable { return rw.async_acquire_write(s, std::move(token)); });
}

/// try_with_lock for a read grant: `body(lease)` runs only if `s` could read within
/// `budget` (0: now or not).
template <class Body>
asio::awaitable<detail::try_result_t<detail::body_result_t<Body, read_write_lease>>>
try_with_read_lock(read_write_lock& rw, session& s, std::chrono::milliseconds budget, Body body) {
    return detail::try_hold_scope<read_write_lease>(
        s, std::move(body), "the read lock was lost while it was held",
        [&rw, s, budget](auto token) mutable {
            return rw.async_try_acquire_read(s, budget, std::move(token));
        });
}

/// try_with_lock for the write grant: `body(lease)` runs only if `s` could write within
/// `budget` (0: now or not).
template <class Body>
asio::awaitable<detail::try_result_t<detail::body_result_t<Body, read_write_lease>>>
try_with_write_lock(read_write_lock& rw, session& s, std::chrono::milliseconds budget, Body body) {
    return detail::try_hold_scope<read_write_lease>(
        s, std::move(body), "the write lock was lost while it was held",
        [&rw, s, budget](auto token) mutable {
            return rw.async_try_acquire_write(s, budget, std::move(token));
        });
}

/// try_with_lock for `slots` slots of a semaphore at once: `body(permit)` runs only if they
/// were had within `budget`.
template <class Body>
asio::awaitable<detail::try_result_t<detail::body_result_t<Body, permit>>>
try_with_permit(semaphore& sem, session& s, std::uint32_t slots, std::chrono::milliseconds budget,
                Body body) {
    return detail::try_hold_scope<permit>(
        s, std::move(body), "the permit was lost while it was held",
        [&sem, s, slots, budget](auto token) mutable {
            return sem.async_try_acquire(s, slots, budget, std::move(token));
        });
}

/// try_with_lock for one slot of a semaphore: `body(permit)` runs only if a slot was had
/// within `budget`.
template <class Body>
asio::awaitable<detail::try_result_t<detail::body_result_t<Body, permit>>>
try_with_permit(semaphore& sem, session& s, std::chrono::milliseconds budget, Body body) {
    return try_with_permit(sem, s, 1, budget, std::move(body));
}

/// with_lock for one term of leadership: campaigns with `s` (elector::async_campaign), runs
/// `body(leadership)` while leading, steps down after it ends. For a process that should
/// lead again after each term, elector::async_run campaigns in a loop (and alone honours
/// release_on_stop, async_resign and the preferred candidate's handover).
template <class Body>
asio::awaitable<detail::body_result_t<Body, leadership>> with_leadership(elector& e, session& s,
                                                                         Body body) {
    return detail::hold_scope<leadership>(
        s, std::move(body), "leadership was lost during the term",
        [&e, s](auto token) mutable { return e.async_campaign(s, std::move(token)); });
}

/// with_lock for a member of a group: joins `g` as `id` with `value`
/// (group::async_join), runs `body(membership)` while a member (cancelled, and
/// errc::lock_lost or the session's loss reason thrown after it returned, when the
/// membership is lost), and leaves however the body ends. Join errors are async_join's.
///
///     co_await conclave::with_membership(workers, s, "worker-3", "10.0.0.3:9000",
///         [&](conclave::membership) -> asio::awaitable<void> { co_await serve(); });
template <class Body>
asio::awaitable<detail::body_result_t<Body, membership>>
with_membership(group& g, session& s, std::string id, std::string value, Body body) {
    return detail::hold_scope<membership>(
        s, std::move(body), "the membership was lost while the body ran",
        [&g, s, id = std::move(id), value = std::move(value)](auto token) mutable {
            return g.async_join(s, id, value, std::move(token));
        });
}

} // namespace conclave
