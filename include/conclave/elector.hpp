// SPDX-License-Identifier: BSL-1.0
/// \file
/// Leader election on one key (a conclave::lock whose value names the leader): class elector.
#pragma once

#include <conclave/detail/export.hpp>
#include <conclave/lock.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace conclave {

namespace detail {
struct elector_state;
struct observer_state;
} // namespace detail

/// Who leads: what a leader published in the key, and its grant.
struct leader_info {
    std::string value;            ///< what the leader published (e.g. "10.0.0.7:8080")
    std::string session;          ///< the leader's session
    std::uint64_t lock_index = 0; ///< Consul's LockIndex of the key in that term
    /// Of the key's last write: the one that made it leader, or a later async_proclaim of
    /// the same term (orders terms: a later term's is larger).
    std::uint64_t modify_index = 0;

    bool operator==(const leader_info&) const = default;
};

/// A candidate as elector::async_participants lists it.
struct participant {
    std::string value;    ///< what it publishes (its elector_options::value)
    std::string session;  ///< its session
    bool leading = false; ///< it leads (the first of the list); else it waits its turn

    bool operator==(const participant&) const = default;
};

/// What elector::async_run(session_config) reports about its sessions to
/// elector_options::on_session (for a log line, a metric, or a caller's own policy: a callback
/// may cancel the run).
struct session_event {
    enum class kind {
        created,        ///< a session was created (`session`): its campaign starts
        create_failed,  ///< a session could not be created (`ec`, `diag`)
        lost,           ///< the session was lost (`ec`: errc::session_invalidated or expired)
        destroy_failed, ///< the destroy after its campaign failed (`ec`, `diag`): Consul drops
                        ///< the session when its TTL runs out
    };
    kind what = kind::created;
    const session* current = nullptr; ///< the session concerned; null for create_failed
    error_code ec;                    ///< why (all kinds but created)
    diagnostics diag;                 ///< Consul's text and conclave's about `ec`
    /// create_failed and lost: the pause before the next session is created. Empty when the
    /// run ends with this failure instead (one a new session cannot fix: a token without
    /// rights, a TTL Consul refuses).
    std::optional<std::chrono::milliseconds> retry_in;
};

/// How an elector campaigns and what it publishes while leading. Not an aggregate (see
/// conclave/consul/request.hpp): set fields with the with_* calls.
struct elector_options : acquire_options<elector_options> {
    elector_options() = default;

    /// Release the key when async_run ends by cancellation (after the leader task has
    /// returned), so the next leader takes over at once instead of after the session
    /// expires. False: keep it until the session ends.
    bool release_on_stop = true;
    /// After async_resign, how long async_run stays out of the race when no other
    /// candidate takes the lead (it campaigns again at once when one does).
    std::chrono::milliseconds resign_holdoff{5000};
    /// The value of the candidate that should lead when it runs (for example the node a
    /// deploy makes leader). When set, candidates queue in fair mode (lock_options::fair), and a
    /// leader that sees the preferred candidate waiting ends its term like a resign and hands
    /// it the key in the releasing transaction: one write and the successor's wake-up, seen
    /// by observe() as one change. Give every candidate the same value (two that prefer
    /// different candidates would hand leadership back and forth).
    std::string preferred;
    /// Candidates queue in fair mode (lock_options::fair): they lead in the order they began
    /// to campaign, across processes, and async_participants lists them in that order. Costs
    /// one more write per campaign (its contender key). Implied by `preferred`. Give every
    /// candidate the same setting.
    bool fair = false;
    /// Called by async_run(session_config), on the elector's executor, as it creates, loses
    /// and destroys its sessions (see session_event), before it goes on. Must not throw.
    /// Empty: nothing is reported.
    std::function<void(const session_event&)> on_session;

    elector_options& with_release_on_stop(bool v) { return set(release_on_stop, v); }
    elector_options& with_resign_holdoff(std::chrono::milliseconds v) {
        return set(resign_holdoff, v);
    }
    elector_options& with_preferred(std::string v) { return set(preferred, std::move(v)); }
    elector_options& with_fair(bool v = true) { return set(fair, v); }
    elector_options& with_on_session(std::function<void(const session_event&)> f) {
        on_session = std::move(f);
        return *this;
    }
};

/// What the leader task gets: the grant it leads under, a lock lease of the elector's key
/// (conclave/grant.hpp lists what every grant offers).
class leadership : public lock_lease {
public:
    leadership() = default; ///< no term (an empty lease)
    /// The term held with `l`.
    explicit leadership(lock_lease l) noexcept
        : lock_lease(std::move(l)) {}
    /// The term as a lock lease (it is one: token, async_guarded_txn for writes that apply
    /// only while leading, async_release to end a term of async_campaign; async_run ends
    /// its terms itself).
    const lock_lease& lease() const noexcept { return *this; }
};

/// The leader task: runs while this process leads; cancelled (terminal cancellation: its
/// next co_await throws operation_aborted) the moment leadership is lost. The key is
/// released only after it has returned, so a new leader never overlaps its cleanup.
using leader_task = std::function<asio::awaitable<void>(leadership)>;

/// A stream of leader changes (see elector::observe).
class CONCLAVE_DECL leader_observer {
public:
    /// Takes over the other observer's stream.
    leader_observer(leader_observer&&) noexcept;
    /// Takes over the other observer's stream.
    leader_observer& operator=(leader_observer&&) noexcept;
    ~leader_observer();

    /// The first call: the current leader, at once. Then: the next change, coalesced to
    /// the latest (a term that began and ended between two calls is not reported). An
    /// empty optional means "no leader" and is reported like any other change.
    /// errc::conflict when the key is not a lock key (other flags).
    template <class Token = default_token_t>
    auto async_next(Token&& token = {}) {
        return detail::initiate<void(error_code, std::optional<leader_info>)>(
            token, &leader_observer::next_impl, state_);
    }

private:
    friend class elector;
    using state_ptr = std::shared_ptr<detail::observer_state>;
    explicit leader_observer(state_ptr s);
    static void
        next_impl(state_ptr,
                  asio::any_completion_handler<void(error_code, std::optional<leader_info>)>);
    state_ptr state_;
};

/// Leader election over Consul, interoperable with Go's api.Lock on the same key.
///
///     conclave::elector el{consul, "service/billing/leader",
///                          conclave::elector_options{}.with_value("10.0.0.7:8080")};
///     co_await el.async_run(s, [](conclave::leadership l) -> asio::awaitable<void> {
///         co_await serve_as_leader(l.token());   // cancelled when leadership is lost
///     });
///
/// Thread safety: lives on its client's executor.
class CONCLAVE_DECL elector {
public:
    /// An elector for the lead named by `key`, used through `c` (a copy of the handle is
    /// kept). Sends nothing until it campaigns or reads the leader.
    elector(client& c, std::string key, elector_options opts = {});

    /// The key whose holder leads.
    const std::string& key() const noexcept;

    /// Campaigns with `s`; while leading runs `task`, cancels it the moment leadership is
    /// lost (lost signal of the lock: owner change, deletion, session loss, local
    /// deadline), releases the key after it returns, and campaigns again. Also when `task`
    /// returns by itself: the key is released and the campaign starts over.
    /// Completes with the session's loss reason (errc::session_invalidated or
    /// errc::session_expired) when the session is lost (there is no
    /// campaigning without it), errc::conflict when the key is not a lock key,
    /// errc::permission_denied when Consul's ACLs refuse the token the key,
    /// operation_aborted when cancelled (after the task returned and, with
    /// release_on_stop, the key was released), and when `task` throws, after the key was
    /// released, the task's own exception with the default token (other tokens:
    /// errc::task_failed). Completes with success once the session was handed over
    /// (hand_over(), session::hand_over). One async_run per elector at a time. To campaign
    /// again after the session is lost, give a session_config instead of a session (the
    /// overload below).
    template <class Token = default_token_t>
    auto async_run(session& s, leader_task task, Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &elector::run_impl, state_, s,
                                                  std::move(task));
    }

    /// async_run for a service that should lead whenever it can: campaigns with a session
    /// of its own, made with `cfg` on the elector's client and renewed beside the campaign,
    /// and after that session is lost (Consul restarted empty, the process paused past the
    /// TTL, the network down) makes a new one and campaigns again, after a pause from 1 s
    /// doubling to 30 s (also while a session cannot be created). The session is destroyed
    /// when the run ends, after the key was released.
    ///
    /// With session_config::with_resume, the first session is the one a predecessor process
    /// handed over (hand_over()), when Consul still knows it: a leader that restarts (a
    /// binary upgrade) leads on at once with the same term and token, and observers see no
    /// change. Later sessions are new ones.
    ///
    /// Runs until cancelled (operation_aborted), until hand_over() (success), or until something a
    /// new session cannot fix: errc::conflict (the key is not a lock), errc::permission_denied, a
    /// session Consul refuses to create (e.g. its TTL). When `task` throws, the key is released
    /// and, with the default token, the task's own exception is rethrown to the caller (other
    /// tokens: errc::task_failed). Each session made, lost, not made or not destroyed is reported
    /// to elector_options::on_session.
    ///
    ///     co_await el.async_run(conclave::session_config{}.with_ttl(10s),
    ///                           [](conclave::leadership l) -> asio::awaitable<void> {
    ///                               co_await serve_as_leader(l.token());
    ///                           });
    template <class Token = default_token_t>
    auto async_run(session_config cfg, leader_task task, Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &elector::run_own_sessions_impl, state_,
                                                  std::move(cfg), std::move(task));
    }
    /// One term, without async_run: waits until this process
    /// leads (as async_run campaigns) and completes with `void(error_code, leadership)`, errors as
    /// async_run's. The term is the caller's to end with `leadership::async_release()`
    /// (with_leadership does it); is_leader() reports it. One term at a time per elector:
    /// errc::invalid_argument while async_run runs, or another campaign or term is under way
    /// (async_run is refused the same way meanwhile). async_resign, release_on_stop and the
    /// preferred candidate's handover are async_run's only.
    template <class Token = default_token_t>
    auto async_campaign(session& s, Token&& token = {}) {
        return detail::initiate<void(error_code, leadership)>(token, &elector::campaign_impl,
                                                              state_, s);
    }

    /// Steps down: the running leader task is cancelled, the key released once it
    /// returned, and async_run stays out of the race until another candidate leads or
    /// resign_holdoff passes (also when the term ended otherwise meanwhile, e.g. lost).
    /// Completes when the key was released (at once when not leading).
    template <class Token = default_token_t>
    auto async_resign(Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &elector::resign_impl, state_,
                                                  std::optional<std::chrono::milliseconds>{});
    }

    /// async_resign staying out for `holdoff` instead of resign_holdoff (this time only):
    /// e.g. a leader task that steps down after a failure of its own, for longer after each.
    /// From the leader task itself, start it without waiting for it (asio::detached): it
    /// cancels the task, and completes only after the task has returned.
    template <class Token = default_token_t>
    auto async_resign(std::chrono::milliseconds holdoff, Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &elector::resign_impl, state_,
                                                  std::optional{holdoff});
    }

    /// The current leader as Consul has it (one read); empty when nobody leads.
    template <class Token = default_token_t>
    auto async_leader(Token&& token = {}) {
        return detail::initiate<void(error_code, std::optional<leader_info>)>(
            token, &elector::leader_impl, state_);
    }

    /// The candidates in the order they would lead: `void(error_code, std::vector<participant>)`,
    /// the leader first (`leading`), then, in fair mode (elector_options::fair or preferred),
    /// the waiting candidates of every process in their order in line (their contender keys
    /// by CreateIndex). A plain-mode candidate leaves no trace in Consul while it waits (it
    /// races for the key when it is released, in no set order): the list then has the leader
    /// only. Empty when nobody leads and nobody waits. One read; errc::conflict when the key
    /// is not a lock key.
    template <class Token = default_token_t>
    auto async_participants(Token&& token = {}) const {
        return detail::initiate<void(error_code, std::vector<participant>)>(
            token, &elector::participants_impl, state_);
    }

    /// The leader publishes `value` in place of its current one (`void(error_code)`), without
    /// a new term: the same session and LockIndex, its fencing token unchanged, so observers
    /// (observe()) report the new value with the same session and lock_index, and no term
    /// ends or begins. For this term only: the next term publishes elector_options::value
    /// again, and the key keeps that value when it is released. errc::invalid_argument when
    /// this elector holds no term (async_run's or async_campaign's); errc::lock_lost (and the
    /// term ends, as any loss) when the key is no longer held by the term's session.
    template <class Token = default_token_t>
    auto async_proclaim(std::string value, Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &elector::proclaim_impl, state_,
                                                  std::move(value));
    }

    /// Hands the session of the running async_run (either form) over to a successor process
    /// (session::hand_over): the term, if any, ends here with nothing written (the leader task
    /// is cancelled, the key is not released), and async_run completes with success. A
    /// successor that resumes the session (session_config::with_resume with the ID returned,
    /// or session::async_resume) and campaigns leads at once, with the same fencing token and
    /// no lock-delay. Synchronous, no I/O. Returns the session's ID; empty when no async_run
    /// has a session to hand over (none running, between sessions, or the session lost).
    std::string hand_over();

    /// The term's token while this process leads and may still consider itself leader
    /// (the lease's held(): synchronous, no I/O).
    std::optional<fencing_token> is_leader() const;

    /// Follows the key: each call of async_next reports the leader after a change.
    leader_observer observe() const;

private:
    using state_ptr = std::shared_ptr<detail::elector_state>;
    static void run_impl(state_ptr, session, leader_task, detail::diagnostics_route*,
                         asio::any_completion_handler<void(error_code)>);
    static void run_own_sessions_impl(state_ptr, session_config, leader_task,
                                      detail::diagnostics_route*,
                                      asio::any_completion_handler<void(error_code)>);
    static void resign_impl(state_ptr, std::optional<std::chrono::milliseconds>,
                            asio::any_completion_handler<void(error_code)>);
    static void campaign_impl(state_ptr, session, detail::diagnostics_route*,
                              asio::any_completion_handler<void(error_code, leadership)>);
    static void
        participants_impl(state_ptr,
                          asio::any_completion_handler<void(error_code, std::vector<participant>)>);
    static void proclaim_impl(state_ptr, std::string,
                              asio::any_completion_handler<void(error_code)>);
    static void
        leader_impl(state_ptr,
                    asio::any_completion_handler<void(error_code, std::optional<leader_info>)>);

    state_ptr state_;
};

} // namespace conclave
