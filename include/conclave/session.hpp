// SPDX-License-Identifier: BSL-1.0
/// \file
/// A Consul session kept alive by a renew loop, with a local deadline: class session.
#pragma once

#include <conclave/client.hpp>
#include <conclave/consul/session.hpp>
#include <conclave/detail/export.hpp>
#include <conclave/detail/initiate.hpp>
#include <conclave/detail/options_base.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace conclave {

namespace detail {
struct session_state;
}

/// How a recipe session is created and kept. Not an aggregate (see conclave/consul/request.hpp):
/// set fields with the with_* calls.
struct session_config : detail::options_base<session_config> {
    session_config() = default;

    /// The session's name in Consul (what session lists show).
    std::string name = "conclave";
    /// Consul keeps the session at least this long after each renew (really about twice).
    std::chrono::milliseconds ttl{15000};
    /// After the session is invalidated, its keys cannot be acquired for this long
    /// (Consul caps it at 60 s). Consul's default is 15 s; 0 disables it.
    std::chrono::milliseconds lock_delay{15000};
    /// What Consul does to the keys the session holds when it is invalidated.
    session_behavior behavior = session_behavior::release;
    /// Node checks the session is bound to. Default: none, so only the TTL (and this
    /// process renewing it) decides its life. {"serfHealth"} also ties it to the node.
    std::vector<std::string> node_checks;
    /// Service checks the session is bound to (e.g. the HTTP check of the service this
    /// process is): Consul invalidates the session as soon as one turns critical or is
    /// deregistered, and refuses to create it while one is critical or missing
    /// (errc::check_critical, Consul's text naming the check).
    std::vector<service_check> service_checks;
    /// When positive: the session is bound to a TTL check of this TTL that the library
    /// registers on the local agent and passes from async_run (every third of it). When this
    /// process stalls or its run stops, the agent marks the check critical and Consul
    /// invalidates the session about `health_ttl` later, instead of the 2 x `ttl` a silent
    /// holder takes otherwise. The check is deregistered when the session ends. 0: none.
    std::chrono::milliseconds health_ttl{0};
    /// Bound on the destroy sent when the session is closed or its run is cancelled; a
    /// cancelled run also waits up to this long before it, for the session's grants to be
    /// released (see session::async_run).
    std::chrono::milliseconds destroy_timeout{2000};
    /// When not empty: session::async_create first resumes this session (see
    /// session::async_resume), the one a predecessor process handed over, and creates a new
    /// session with the settings above only when Consul no longer knows it. For a program
    /// that restarts (a binary upgrade) and keeps its session ID in a file: its locks,
    /// permits and leadership are then had again with the same fencing tokens, with no
    /// lock-delay and no election. session::resumed() tells which happened.
    std::string resume_id;

    session_config& with_name(std::string v) { return set(name, std::move(v)); }
    session_config& with_ttl(std::chrono::milliseconds v) { return set(ttl, v); }
    session_config& with_lock_delay(std::chrono::milliseconds v) { return set(lock_delay, v); }
    session_config& with_behavior(session_behavior v) { return set(behavior, v); }
    session_config& with_node_checks(std::vector<std::string> v) {
        return set(node_checks, std::move(v));
    }
    session_config& with_service_checks(std::vector<service_check> v) {
        return set(service_checks, std::move(v));
    }
    session_config& with_health_ttl(std::chrono::milliseconds v) { return set(health_ttl, v); }
    session_config& with_destroy_timeout(std::chrono::milliseconds v) {
        return set(destroy_timeout, v);
    }
    session_config& with_resume(std::string id) { return set(resume_id, std::move(id)); }
};

/// How far a grant can be trusted: a session, or a lock, permit or leadership held with one.
/// `held -> jeopardy -> lost`, and back from jeopardy to held when a renewal succeeds.
enum class hold_health {
    /// Renewals succeed: the local deadline keeps moving ahead.
    held,
    /// A renewal failed, or none succeeded when only 3/8 of the TTL is left (one is due at
    /// half the TTL): still held until `remaining()` runs out, but it may be lost then.
    /// Finish or hand over the work in progress; do not start more.
    jeopardy,
    /// Final: the session is gone, its local deadline passed, or the grant ended.
    lost,
};

/// A Consul session owned by this process. One session can back many grants (locks,
/// permits, leadership).
///
/// The session is *lost* when Consul says it no longer exists (renew answers 404), when its
/// local deadline passes (start of the last successful renew + TTL: Consul cannot have
/// expired it before then, so giving up at that moment is always early enough; with a
/// health_ttl check, also no later than the start of its last successful pass + health_ttl),
/// or when it is destroyed. Loss is final: create a new session to continue.
///
/// `async_run` must be running for the session to be renewed (and its health_ttl check
/// passed). conclave::with_session
/// (conclave/hold_scope.hpp) runs it beside the work that needs the session, cancels that
/// work when the session is lost, and destroys the session however the work ends: use it
/// rather than racing async_run by hand (docs/howto/sessions.md).
///
/// A session is a cheap handle; copies share the same state. It lives on its client's
/// executor and is not thread-safe. When the program's last handle goes away without the
/// session having been destroyed or lost, the session is destroyed in the background: an
/// async_run still renewing it stops (completing with operation_aborted) and destroys it,
/// so a run left detached never keeps alive a session nobody uses. Grants made with the
/// session are not handles: without one, nothing renews their session any more.
class CONCLAVE_DECL session {
public:
    /// The clock of deadline() and remaining().
    using clock = std::chrono::steady_clock;

    /// No session (valid() is false): assign one that async_create made.
    session() = default;

    /// Creates a session. Completes with `void(error_code, session)`.
    template <class Token = default_token_t>
    static auto async_create(client& c, session_config cfg = {}, Token&& token = {}) {
        return detail::initiate<void(error_code, session)>(token, &session::create_impl, c,
                                                           std::move(cfg));
    }

    /// Takes over the session `id` that another process (a predecessor of this program, before
    /// a restart) created and handed over (hand_over()): renews it at once, which proves
    /// Consul still knows it and restarts its TTL. Its settings are Consul's record of it
    /// (name, TTL, lock-delay, behaviour, checks); the library's health check (health_ttl),
    /// if it has one, is passed from this process's async_run from now on, which must then
    /// talk to the same agent. Acquiring a lock, a permit or leadership that the session
    /// still holds then grants it again without a write: same LockIndex, same fencing
    /// token, no lock-delay, and nothing that observers see. Completes with
    /// `void(error_code, session)`:
    /// - errc::session_invalidated when Consul no longer knows the session (it expired, was
    ///   destroyed, or a check it is bound to failed): nothing is held with it any more;
    /// - errc::check_critical when the session's health check is not on this client's agent;
    /// - errc::invalid_argument for an empty id.
    ///
    /// The predecessor must have handed the session over (or stopped) before: two processes
    /// renewing one session would both think they hold its grants. The session must be
    /// resumed within its TTL of the predecessor's last renewal.
    template <class Token = default_token_t>
    static auto async_resume(client& c, std::string id, Token&& token = {}) {
        return detail::initiate<void(error_code, session)>(token, &session::resume_impl, c,
                                                           std::move(id));
    }

    /// Hands the session over to a successor process, which resumes it with
    /// async_resume(id()) (or session_config::with_resume) within its TTL: this process lets
    /// it go without ending it on Consul. From now on, here:
    /// - the session counts as lost (errc::session_handed_over), and so does every grant
    ///   held with it: their lost signals fire, hold scopes cancel their bodies;
    /// - nothing is written for it any more: releases of its grants complete at once with
    ///   nothing sent, async_destroy does nothing, and neither a cancelled run nor the last
    ///   handle going destroys it;
    /// - async_run stops renewing it and completes with success.
    /// Synchronous, no I/O. Returns false, doing nothing, when the session is already lost.
    bool hand_over() noexcept;
    /// Whether this session was resumed (async_resume, session_config::with_resume) rather
    /// than created.
    bool resumed() const noexcept;

    /// Renews the session at TTL/2, retrying transient failures (with backoff) until the
    /// local deadline. Completes with:
    /// - errc::session_invalidated when Consul no longer knows the session (or it was
    ///   destroyed);
    /// - errc::session_expired when renewals kept failing until the local deadline passed
    ///   (Consul may still know the session, but nothing held with it can be trusted);
    /// - success when the session was destroyed with async_destroy() or handed over
    ///   (hand_over());
    /// - operation_aborted when cancelled (terminal cancellation), at once: the session is
    ///   marked lost and destroyed on Consul in the background, on the client's executor
    ///   (keep the io_context running until it is done, as `run()` does). The destroy
    ///   waits first, up to destroy_timeout, for the locks and permits of the session that
    ///   are still held to be released: a cancellation that also stops their holders
    ///   (`s.async_run(...) || el.async_run(s, ...)`) lets them release first, so the keys
    ///   are freed without the session's lock-delay. The destroy itself is bounded by
    ///   destroy_timeout too. Nothing of the run waits on the cancellation slot after it
    ///   completes.
    template <class Token = default_token_t>
    auto async_run(Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &session::run_impl, state_);
    }

    /// Completes when the session is lost, with its loss reason (errc::session_invalidated
    /// or errc::session_expired, as async_run), never success; operation_aborted when
    /// cancelled.
    template <class Token = default_token_t>
    auto async_wait_lost(Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &session::wait_lost_impl, state_);
    }

    /// Destroys the session on Consul (its keys are released or deleted per its behaviour).
    /// Idempotent and retry-safe: the session counts as destroyed only once Consul said so.
    template <class Token = default_token_t>
    auto async_destroy(Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &session::destroy_impl, state_);
    }

    /// False for a default-constructed session.
    bool valid() const noexcept { return state_ != nullptr; }
    /// The session's ID in Consul.
    const std::string& id() const noexcept;
    /// The client the session was created with.
    client& get_client() const noexcept;
    /// The settings it was created with.
    const session_config& config() const noexcept;
    /// The TTL in force (Consul may have asked for a larger one).
    std::chrono::milliseconds ttl() const noexcept;
    /// Before this moment Consul cannot have expired the session.
    clock::time_point deadline() const noexcept;
    /// The ID of the TTL check the library keeps for the session (session_config::health_ttl),
    /// empty when there is none.
    const std::string& health_check_id() const noexcept;
    /// Lost (invalidated, expired locally, or destroyed)?
    bool lost() const noexcept;
    /// held, jeopardy or lost, now (synchronous, no I/O).
    hold_health health() const noexcept;
    /// Time left before the local deadline (zero once lost): how long anything held with
    /// this session may still be trusted if no renewal succeeds.
    clock::duration remaining() const noexcept;

    /// Completes as soon as health() differs from `seen` (at once when it already does),
    /// with the new health: `void(error_code, hold_health)`. Waiting from `held` wakes on
    /// jeopardy or loss; from `jeopardy`, on recovery or loss; from `lost`, only on
    /// cancellation (operation_aborted). Needs async_run to be running to ever recover.
    template <class Token = default_token_t>
    auto async_wait_health_change(hold_health seen, Token&& token = {}) {
        return detail::initiate<void(error_code, hold_health)>(
            token, &session::wait_health_change_impl, state_, seen);
    }
    /// Why it was lost (empty while it is not).
    error_code loss_reason() const noexcept;

    /// For recipes: the shared state.
    const std::shared_ptr<detail::session_state>& state() const noexcept { return state_; }

private:
    explicit session(std::shared_ptr<detail::session_state> s);

    static void create_impl(client c, session_config cfg, detail::diagnostics_route* route,
                            asio::any_completion_handler<void(error_code, session)> h);
    static void resume_impl(client c, std::string id, detail::diagnostics_route* route,
                            asio::any_completion_handler<void(error_code, session)> h);
    using state_ptr = std::shared_ptr<detail::session_state>;
    static void run_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h);
    static void wait_lost_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h);
    static void destroy_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h);
    static void
    wait_health_change_impl(state_ptr s, hold_health seen,
                            asio::any_completion_handler<void(error_code, hold_health)> h);

    std::shared_ptr<detail::session_state> state_;
    /// Shared by the program's handles only (recipes keep the state, not this): when the
    /// last one goes, a run still renewing the session stops and destroys it.
    std::shared_ptr<void> handle_;
};

} // namespace conclave
