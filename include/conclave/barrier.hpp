// SPDX-License-Identifier: BSL-1.0
/// \file
/// Barriers across processes: class barrier (one key that holds waiters back while it is
/// set) and class double_barrier (N participants enter together and leave together).
#pragma once

#include <conclave/client.hpp>
#include <conclave/detail/export.hpp>
#include <conclave/detail/keyed_options.hpp>
#include <conclave/session.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace conclave {

/// Flags of a conclave::barrier's key: a random number, as Go's lock_flag_value and
/// semaphore_flag_value are, so that other recipes' keys (and theirs) are told apart.
inline constexpr std::uint64_t barrier_flag_value = 2593176564824773710ULL;
/// Flags of a conclave::double_barrier's keys: its participants' `<prefix>/<session>` and
/// its `<prefix>/.ready`.
inline constexpr std::uint64_t double_barrier_flag_value = 7842199347339770360ULL;

namespace detail {
struct barrier_state;
struct double_barrier_state;
struct session_state;
} // namespace detail

/// How a barrier, a double barrier or a countdown latch bounds its writes (budget: set,
/// remove, try_set_count, count_down) and watches its key or prefix (wait, retry_wait),
/// and where a failure's text goes (diag): see detail::keyed_options. Not an aggregate
/// (see conclave/consul/request.hpp): set fields with the with_* calls.
struct barrier_options : detail::keyed_options<barrier_options> {
    barrier_options() = default;
};

/// A barrier in one KV key, like Curator's DistributedBarrier: while the key exists, every
/// async_wait waits; async_remove lets them all through. The key has flags
/// barrier_flag_value and an empty value; no session is involved, so a barrier outlives
/// the process that set it (remove it by hand with `consul kv delete KEY`).
///
///     conclave::barrier gate{consul, "deploy/gate"};
///     co_await gate.async_set();    // in the coordinator
///     co_await gate.async_wait();   // in the workers: until the coordinator's remove
///
/// Errors: errc::conflict when the key is another's (other flags, a session's hold), the
/// message naming the key and what it holds; the request's own errors. A set or remove
/// whose reply never came may or may not have been applied: it fails, and its diagnostics
/// say that the outcome is unknown.
///
/// Cancellation: terminal for set and remove, as for the client's requests; every type for
/// async_wait and async_is_set. A cancelled operation completes with operation_aborted.
/// A barrier lives on its client's executor and is not thread-safe; copies share the key,
/// the options and the query of async_wait.
class CONCLAVE_DECL barrier {
public:
    /// The barrier in `key`, used through `c`. Sends nothing. Throws
    /// boost::system::system_error (errc::invalid_argument) for an empty key.
    barrier(client& c, std::string key, barrier_options opts = {});

    /// The KV key it lives in.
    const std::string& key() const noexcept;

    /// Sets the barrier (creates its key): `void(error_code)`. Setting a set barrier
    /// changes nothing.
    template <class Token = default_token_t>
    auto async_set(Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &barrier::set_impl, state_, true);
    }

    /// Removes the barrier (deletes its key): `void(error_code)`; every wait ends. Removing
    /// a barrier that is not set changes nothing.
    template <class Token = default_token_t>
    auto async_remove(Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &barrier::set_impl, state_, false);
    }

    /// One read: `void(error_code, bool)`, whether the barrier is set.
    template <class Token = default_token_t>
    auto async_is_set(Token&& token = {}) const {
        return detail::initiate<void(error_code, bool)>(token, &barrier::is_set_impl, state_);
    }

    /// Waits until the barrier is not set: `void(error_code)`, at once when it is not. Every
    /// wait of one client on one key shares one blocking query. Failed reads are retried
    /// every retry_wait, without surfacing; errc::permission_denied ends the wait, and
    /// errc::conflict when the key becomes another recipe's.
    template <class Token = default_token_t>
    auto async_wait(Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &barrier::wait_impl, state_);
    }

private:
    using state_ptr = std::shared_ptr<detail::barrier_state>;
    static void set_impl(state_ptr, bool, detail::diagnostics_route*,
                         asio::any_completion_handler<void(error_code)>);
    static void is_set_impl(state_ptr, detail::diagnostics_route*,
                            asio::any_completion_handler<void(error_code, bool)>);
    static void wait_impl(state_ptr, detail::diagnostics_route*,
                          asio::any_completion_handler<void(error_code)>);

    state_ptr state_;
};

/// A double barrier on a KV prefix, like Curator's DistributedDoubleBarrier and etcd's
/// recipe: N participants, each with its session, enter together (async_enter completes
/// for all of them once N are inside) and leave together (async_leave completes once every
/// participant of the round has left).
///
///     conclave::double_barrier start{consul, "jobs/batch-7", 3};
///     co_await start.async_enter(s); // until 3 participants are inside
///     co_await compute();
///     co_await start.async_leave(s); // until the 3 have left
///
/// Layout (flags double_barrier_flag_value on every key): each participant holds
/// `<prefix>/<session ID>`, acquired with its session, its value the number of participants;
/// the enter that sees the N-th writes `<prefix>/.ready`, listing the participants inside
/// then, so that participants that read later (when some have left already) see the barrier
/// open, and so does any participant that comes after it opened, while one of its round is
/// inside. The marker goes when the round has left (the last leaver deletes it) or crashed
/// (the next enter deletes it).
///
/// Crashes: a participant counts only while its own session holds its key. When a session
/// ends (its TTL ran out, it was destroyed or invalidated), Consul deletes its key
/// (behavior delete) or only releases it (behavior release, session_config's default): it
/// no longer counts either way, and released keys are deleted when seen. So an enter never
/// passes with a crashed participant counted among the N, and a leave does not wait for a
/// participant that crashed. The session must be kept alive (session::async_run or
/// with_session) while its participant is inside.
///
/// Errors: errc::conflict when a key under the prefix is another's (other flags, a
/// participant key held by a session of another name, a marker that is not a list), the
/// message naming it; errc::limit_conflict when a participant inside expects another
/// number of participants; the session's loss (errc::session_invalidated, ...) when it ends
/// while entering; errc::lock_lost when its key was deleted by someone else meanwhile;
/// errc::permission_denied; the request's own errors.
///
/// One participant per session and prefix: a session enters once, and enters again only
/// after its leave (a second enter with a session inside passes at once while its round is
/// open). An enter while another enter of the same session on the same prefix is under way
/// in this process (through this object or another) completes at once with
/// errc::invalid_argument, writing nothing: the two would share one participant key. Every
/// participant must give the same count.
class CONCLAVE_DECL double_barrier {
public:
    /// A double barrier of `participants` under `prefix`, used through `c`. Sends nothing.
    /// Throws boost::system::system_error (errc::invalid_argument) when `participants` is 0
    /// or the prefix is empty.
    double_barrier(client& c, std::string prefix, std::uint32_t participants,
                   barrier_options opts = {});

    /// The KV prefix it lives under (without a trailing '/').
    const std::string& prefix() const noexcept;
    /// How many participants open it.
    std::uint32_t participants() const noexcept;

    /// Enters with `s` and waits until the barrier opens: `void(error_code)`. Writes the
    /// participant key, then waits on the prefix's query, which every enter and leave of
    /// one client on the prefix shares.
    ///
    /// errc::invalid_argument, at once and with nothing written, while another enter of `s`
    /// on this prefix is under way in this process.
    ///
    /// Cancellation (any type): completes with operation_aborted, after deleting the
    /// participant key (the enter left no trace; a cleanup that fails leaves the key to its
    /// session). A failed enter deletes it too. When the barrier opened just before the
    /// cancellation took effect, it opened for the others all the same.
    template <class Token = default_token_t>
    auto async_enter(session& s, Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &double_barrier::enter_impl, state_,
                                                  s.state());
    }

    /// Leaves: deletes the participant key of `s`, then waits until every other participant
    /// of its round (those the marker lists, else those inside when the leave began) has
    /// left or crashed: `void(error_code)`. The last to see them all gone deletes the marker.
    /// A leave without a key inside waits for the round the marker lists with its session, if
    /// any, and completes at once otherwise.
    ///
    /// Cancellation (any type): completes with operation_aborted; once its key is deleted
    /// (its first write), the participant has left all the same: only the wait for the
    /// others is cut short.
    template <class Token = default_token_t>
    auto async_leave(session& s, Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &double_barrier::leave_impl, state_,
                                                  s.state());
    }

private:
    using state_ptr = std::shared_ptr<detail::double_barrier_state>;
    using session_ptr = std::shared_ptr<detail::session_state>;
    static void enter_impl(state_ptr, session_ptr, detail::diagnostics_route*,
                           asio::any_completion_handler<void(error_code)>);
    static void leave_impl(state_ptr, session_ptr, detail::diagnostics_route*,
                           asio::any_completion_handler<void(error_code)>);

    state_ptr state_;
};

} // namespace conclave
