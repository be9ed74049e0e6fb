// SPDX-License-Identifier: BSL-1.0
/// \file
/// The metrics hook: events of a client and of the recipes on it, for an observer to count.
#pragma once

#include <conclave/detail/export.hpp>
#include <conclave/error.hpp>
#include <conclave/session.hpp>

#include <chrono>
#include <string_view>

namespace conclave {

/// A request to Consul that has ended.
struct request_event {
    /// Which API: "kv_get", "kv_list", "kv_keys", "kv_put", "kv_delete", "txn",
    /// "session_create", "session_renew", "session_destroy", "session_info", "session_list",
    /// "session_node", "status_leader", "agent_self", "agent_check_register",
    /// "agent_check_deregister", "agent_check_update" (a fixed set: fit for a metric label).
    std::string_view endpoint;
    std::string_view method; ///< "GET", "PUT" or "DELETE"
    bool blocking = false;   ///< a blocking query: its duration includes Consul's wait
    /// The HTTP status of the reply (a 404 of a KV read is an absent key, not a failure);
    /// 0 when no reply came, then `error` says why.
    unsigned status = 0;
    /// Why no reply came: errc::timeout, asio::error::operation_aborted (cancelled by the
    /// caller, or by a recipe's own deadline, e.g. a renewal out of time), a connection or
    /// TLS error, bad_response, "body limit exceeded", errc::pool_closed, errc::rate_limited
    /// (Consul refused every connection of this address: its per-client limit).
    error_code error;
    /// From the call to its end, including the wait for a pooled connection.
    std::chrono::nanoseconds duration{0};
};

/// A session renewal that has ended (async_run renews at half the TTL).
struct renew_event {
    std::string_view session; ///< the session's ID
    error_code error;         ///< empty: renewed
    std::chrono::nanoseconds duration{0};
};

/// A pass of the health check a session is bound to (session_config::health_ttl) that has
/// ended (async_run passes it every third of its TTL).
struct check_pass_event {
    std::string_view session; ///< the session's ID
    std::string_view check;   ///< the check's ID (session::health_check_id())
    error_code error;         ///< empty: passed
    std::chrono::nanoseconds duration{0};
};

/// What a grant is (an elector campaigns with a lock on its key: its acquires are a lock's).
enum class grant_kind { lock, semaphore, multi_lock, read_write_lock };

/// How an acquire ended.
enum class acquire_outcome {
    taken, ///< this acquire wrote the key (or took a permit) itself
    /// Granted by another's transaction: a releasing holder's (a handoff), or, for a
    /// semaphore, a local waiter's that took several free slots at once.
    handed_over,
    already_held, ///< its session held it already: granted without a write
    timed_out,    ///< the budget of a try-acquire ran out: not acquired
    cancelled,    ///< cancelled: not acquired
    failed,       ///< an error: not acquired (see `error`)
};

/// An acquire of a lock or semaphore (or an elector's campaign) that has ended.
struct acquire_event {
    grant_kind kind = grant_kind::lock;
    /// The lock's key (an election's key, a read-write lock's key), the semaphore's prefix, a
    /// multi-lock's first key.
    std::string_view key;
    acquire_outcome outcome = acquire_outcome::taken;
    error_code error;                   ///< when `failed`
    std::chrono::nanoseconds waited{0}; ///< from the call to its end
};

/// What a health event is about. Jeopardy and recovery are a session's (its grants share
/// them); losses are reported for the session and for each grant the library sees end.
enum class hold_kind { session, lock, semaphore, multi_lock, read_write_lock, group_member };

/// A session or grant changed health (see hold_health).
struct health_event {
    hold_kind kind = hold_kind::session;
    /// The session's ID, the lock's key (a read-write lock's), the semaphore's contender key, a
    /// multi-lock's first key, a group member's key.
    std::string_view name;
    hold_health health = hold_health::held; ///< now: jeopardy, lost, or held again
    /// Why. Jeopardy: the failed renewal's error (errc::timeout when none answered in
    /// time). Lost: errc::session_invalidated (Consul ended the session: TTL, destroy,
    /// a node check), errc::session_expired (the local deadline passed without a renewal),
    /// errc::lock_lost (the key was taken away or deleted). Held again: empty.
    error_code reason;
};

/// A term of elector::async_run that began or ended. (A term of async_campaign is the
/// caller's lock grant: its acquire and loss are reported as a lock's.)
struct leadership_event {
    std::string_view key;
    bool leading = false; ///< true: began; false: ended
    /// Why it ended (empty when it began): "task_returned", "resigned", "handed_over" (to
    /// the preferred candidate), "lost" (the grant was lost), "task_failed", "stopped"
    /// (async_run was cancelled), "restarting" (the session was handed over to a successor
    /// process, which goes on with the term). A fixed set: fit for a metric label.
    std::string_view cause;
};

/// Receives the events behind metrics. Set one in client_config::observer: the client calls
/// it for its requests and connections, and every recipe on that client for its sessions and
/// grants. Override what you need; the default of each call does nothing.
///
/// Calls are synchronous, on the library's own paths: from the executor that runs the
/// operation, or from the thread that calls an accessor that notices a loss (health(),
/// lost(), held()). They must be quick; what one throws is dropped. The string_views in an
/// event are valid during the call only. An observer shared by clients run by several
/// threads must synchronise itself (conclave::metrics does).
class CONCLAVE_DECL observer {
public:
    virtual ~observer();

    /// A request is about to wait for a connection (a blocking query: for its place first,
    /// which the client keeps below its connection limit).
    virtual void request_started(std::string_view endpoint, bool blocking);
    virtual void request_finished(const request_event& e);
    /// A connection to Consul was established, or closed (by either side, or dropped).
    virtual void connection_opened();
    virtual void connection_closed();
    virtual void session_renewed(const renew_event& e);
    virtual void check_passed(const check_pass_event& e);
    virtual void health_changed(const health_event& e);
    virtual void acquire_finished(const acquire_event& e);
    virtual void leadership_changed(const leadership_event& e);
};

/// Short names, fit for metric labels: "lock", "semaphore", "session";
/// "taken", "handed_over", ...
CONCLAVE_DECL std::string_view to_string(grant_kind k) noexcept;
CONCLAVE_DECL std::string_view to_string(hold_kind k) noexcept;
CONCLAVE_DECL std::string_view to_string(acquire_outcome o) noexcept;

} // namespace conclave
