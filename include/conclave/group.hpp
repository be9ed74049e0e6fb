// SPDX-License-Identifier: BSL-1.0
/// \file
/// Group membership under a KV prefix, each member a key held by its session: class group,
/// its members' handles (membership) and the stream of their changes (group_watch).
#pragma once

#include <conclave/client.hpp>
#include <conclave/detail/export.hpp>
#include <conclave/detail/options_base.hpp>
#include <conclave/grant.hpp>
#include <conclave/session.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace conclave {

namespace detail {
struct group_state;
struct group_watch_state;
} // namespace detail

/// How a group reads its prefix and watches its members. Not an aggregate (see
/// conclave/consul/request.hpp): set fields with the with_* calls.
struct group_options : detail::options_base<group_options> {
    group_options() = default;

    /// Longest blocking query of the read that watches and memberships share (Consul adds
    /// up to 1/16 of jitter). That read is the client's for the prefix: the first group
    /// object of a client on a prefix sets its wait and monitor_retry_wait.
    std::chrono::milliseconds wait{15000};
    /// Consecutive failed reads a membership tolerates before it counts as lost (the
    /// session's local deadline bounds it anyway).
    unsigned monitor_retries = 3;
    /// Pause after a failed read before the next one.
    std::chrono::milliseconds monitor_retry_wait{1000};
    /// Bound of each join, update and leave, retries included. 0: the client's
    /// request_timeout. A join that meets the lock-delay of a member key (its previous
    /// session was invalidated) waits it out within this budget.
    std::chrono::milliseconds budget{0};
    /// Filled with what a failed operation says (Consul's text, and conclave's: which key,
    /// held by what) when not null, for tokens other than with_diagnostics.
    diagnostics* diag = nullptr;

    group_options& with_wait(std::chrono::milliseconds v) { return set(wait, v); }
    /// Sets monitor_retries to `n` and monitor_retry_wait to `every`.
    group_options& with_monitor_retries(unsigned n, std::chrono::milliseconds every) {
        monitor_retries = n;
        return set(monitor_retry_wait, every);
    }
    group_options& with_budget(std::chrono::milliseconds v) { return set(budget, v); }
    group_options& with_diag(diagnostics* v) { return set(diag, v); }
};

/// One member of a group, as read. (Not `group_member`: glibc's <unistd.h> declares a
/// function of that name, which `using namespace conclave` would make ambiguous.)
struct member_info {
    std::string id;                 ///< the last part of its key, `<prefix>/<id>`
    std::string value;              ///< what it published (async_join, async_update)
    std::string session;            ///< the session it is a member with
    std::uint64_t create_index = 0; ///< of its key: members ordered by it joined in that order
    std::uint64_t modify_index = 0; ///< of its key's last write (join or update)

    bool operator==(const member_info&) const = default;
};

/// One change between two reports of a group_watch.
struct member_change {
    enum class kind {
        joined,  ///< a member appeared (the first report: every member)
        left,    ///< a member left (its key deleted, or its session ended)
        updated, ///< a member's value changed (same session)
    };
    kind what = kind::joined;
    /// The member: as it is now (joined, updated), as it was last reported (left).
    member_info member;

    bool operator==(const member_change&) const = default;
};

/// What group_watch::async_next reports: the members now, and what changed since the
/// previous report.
struct group_view {
    std::vector<member_info> members;   ///< sorted by id
    std::vector<member_change> changes; ///< left first, then joined and updated, by id
    std::uint64_t index = 0;            ///< the X-Consul-Index the members were read at
};

/// A member of a group held by this process: a grant (token, held, health, remaining,
/// async_wait_lost, async_wait_health_change, async_release; see conclave/grant.hpp) whose
/// key is `<prefix>/<id>`. Lost when its key is deleted or taken by another session, or its
/// session ends (errc::lock_lost, errc::session_invalidated, errc::session_expired). Copies
/// share the same membership.
class CONCLAVE_DECL membership : public grant {
public:
    /// Not a member (valid() is false): assign one that async_join completed with.
    membership() = default;

    /// The member id (requires valid()).
    const std::string& id() const noexcept;

    /// Publishes `value` as this member's value (`void(error_code)`), in place: same key,
    /// same session, LockIndex and token unchanged; watchers see member_change::updated.
    /// errc::lock_lost (and the membership counts as lost) when the key is no longer held by
    /// its session; errc::invalid_argument for an empty membership.
    template <class Token = default_token_t>
    auto async_update(std::string value, Token&& token = {}) const {
        return detail::initiate<void(error_code)>(token, &membership::update_impl, state_,
                                                  std::move(value));
    }

    /// Leaves the group: deletes the key if its session still holds it (async_release does
    /// the same). Retry-safe: leaving a membership already lost or left succeeds; on a
    /// transport error it stays a member and the call can be repeated.
    template <class Token = default_token_t>
    auto async_leave(Token&& token = {}) const {
        return async_release(std::forward<Token>(token));
    }

private:
    friend struct detail::group_state;
    explicit membership(state_ptr s) noexcept
        : grant(std::move(s)) {}
    static void update_impl(state_ptr, std::string, detail::diagnostics_route*,
                            asio::any_completion_handler<void(error_code)>);
};

/// A stream of a group's changes (see group::watch).
class CONCLAVE_DECL group_watch {
public:
    /// Takes over the other watch's stream.
    group_watch(group_watch&&) noexcept;
    /// Takes over the other watch's stream.
    group_watch& operator=(group_watch&&) noexcept;
    ~group_watch();

    /// `void(error_code, group_view)`. The first call: the current members at once (each a
    /// `joined` change). Each later call: once the members differ from the last report, the
    /// latest members and the changes between (coalesced: a member that joined and left
    /// between two calls is not reported; one that left and joined again with a new session
    /// is reported as left and joined).
    ///
    /// Every watch (and membership) of one client on one prefix shares one blocking query,
    /// whatever their number; it runs while someone waits. Failed reads are retried every
    /// monitor_retry_wait without surfacing; errc::permission_denied ends the call.
    ///
    /// Cancellation: terminal, partial and total; a cancelled call completes with
    /// operation_aborted and changes nothing (the next call reports from the last report).
    /// One call at a time: a second concurrent one completes with errc::invalid_argument.
    template <class Token = default_token_t>
    auto async_next(Token&& token = {}) {
        return detail::initiate<void(error_code, group_view)>(token, &group_watch::next_impl,
                                                              state_);
    }

private:
    friend class group;
    using state_ptr = std::shared_ptr<detail::group_watch_state>;
    explicit group_watch(state_ptr s);
    static void next_impl(state_ptr, detail::diagnostics_route*,
                          asio::any_completion_handler<void(error_code, group_view)>);
    state_ptr state_;
};

/// Group membership (Curator's GroupMember, etcd's session-bound keys): each member is the
/// key `<prefix>/<id>` holding its value, acquired with its session, so it leaves the
/// group when it leaves or when its session ends (whatever the session's behavior: a key
/// only released by its session, behavior `release`, is no member). Keys under the prefix
/// that are not member keys (other flags, deeper paths) are ignored.
///
///     conclave::group workers{consul, "service/workers"};
///     auto me = co_await workers.async_join(s, "worker-7", "10.0.0.7:9000");
///     auto members = co_await workers.async_members();
///     auto changes = workers.watch();
///     for (;;) {
///         auto view = co_await changes.async_next(); // first: everyone, at once
///         rebalance(view.members);                   // then: after each change
///     }
///
/// Lives on its client's executor; not thread-safe. Copies share the prefix, the options
/// and the query.
class CONCLAVE_DECL group {
public:
    /// The group under `prefix` (a trailing '/' is dropped), used through `c`. Sends
    /// nothing. Throws boost::system::system_error (errc::invalid_argument) for an empty
    /// prefix.
    group(client& c, std::string prefix, group_options opts = {});

    /// The prefix, without its trailing '/'.
    const std::string& prefix() const noexcept;

    /// Joins as `id` with `value`, its key held by `s`: `void(error_code, membership)`.
    /// Errors: errc::invalid_argument for an empty id or one with a '/'; errc::conflict when
    /// the key is held by another session (a live member with that id) or is not a member
    /// key (another recipe's or a plain key), the message saying which; the session's loss
    /// reason when Consul no longer knows it; errc::timeout when the budget ran out (a
    /// lock-delay outlasting it); operation_aborted when cancelled (nothing joined: a write
    /// that may have been applied is undone). Joining again with the id and session of a
    /// member (a retry after an unknown outcome) takes that key over with the new value.
    template <class Token = default_token_t>
    auto async_join(session& s, std::string id, std::string value, Token&& token = {}) {
        return detail::initiate<void(error_code, membership)>(
            token, &group::join_impl, state_, s.state(), std::move(id), std::move(value));
    }

    /// The members now (one read): `void(error_code, std::vector<member_info>)`, by id.
    template <class Token = default_token_t>
    auto async_members(Token&& token = {}) const {
        return detail::initiate<void(error_code, std::vector<member_info>)>(
            token, &group::members_impl, state_);
    }

    /// A stream of the members' changes. Sends nothing until its first async_next.
    group_watch watch() const;

private:
    using state_ptr = std::shared_ptr<detail::group_state>;
    using session_ptr = std::shared_ptr<detail::session_state>;
    static void join_impl(state_ptr, session_ptr, std::string, std::string,
                          detail::diagnostics_route*,
                          asio::any_completion_handler<void(error_code, membership)>);
    static void
    members_impl(state_ptr, detail::diagnostics_route*,
                 asio::any_completion_handler<void(error_code, std::vector<member_info>)>);
    state_ptr state_;
};

} // namespace conclave
