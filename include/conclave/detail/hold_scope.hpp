// SPDX-License-Identifier: BSL-1.0
// with_lock / with_permit / with_leadership (conclave/hold_scope.hpp): running a body while a
// grant is held, and ending the grant however the body ends.
#pragma once

#include <conclave/error.hpp>
#include <conclave/session.hpp>
#include <conclave/with_diagnostics.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

namespace conclave::detail {

template <class Awaitable>
struct awaitable_value {
    static_assert(!sizeof(Awaitable*), "the body must return an asio::awaitable");
};
template <class T, class Executor>
struct awaitable_value<asio::awaitable<T, Executor>> {
    using type = T;
};

/// What `body(arg)` gives when awaited.
template <class Body, class Arg>
using body_result_t = typename awaitable_value<std::invoke_result_t<Body&, Arg&>>::type;

/// What a scope keeps of the body's value: the value, or std::monostate for a void body.
template <class R>
using stored_t = std::conditional_t<std::is_void_v<R>, std::monostate, R>;

/// What the scope's own coroutine returns: the body's value, or nothing when the grant was
/// not had (a try_with_* scope). In an optional: co_spawn needs a default-constructible
/// result, and the body's type need not be one.
template <class R>
using scope_result_t = std::optional<stored_t<R>>;

/// An acquire's grant, in an optional: async_try_acquire gives one already, async_acquire
/// a grant (always had).
template <class Grant>
std::optional<Grant> as_optional(std::optional<Grant>&& grant) {
    return std::move(grant);
}
template <class Grant>
std::optional<Grant> as_optional(Grant&& grant) {
    return std::optional<Grant>{std::move(grant)};
}

/// Releases `grant`, retrying while Consul cannot be reached (the outcome of a failed release
/// is unknown) until it succeeds, fails for good, or the session is lost (Consul then frees
/// the key itself). Awaited, never left to run in the background: releases go by session,
/// not by grant, so a retry left behind could release a later grant of the same session.
template <class Grant>
asio::awaitable<void> release_grant(Grant& grant, const session& s) {
    constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
    std::chrono::milliseconds pause{250};
    for (;;) {
        auto [ec] = co_await grant.async_release(tuple_awaitable);
        if (!ec || !is_retryable(ec) || s.lost())
            co_return;
        asio::steady_timer timer{co_await asio::this_coro::executor,
                                 std::min<session::clock::duration>(pause, s.remaining())};
        co_await timer.async_wait(tuple_awaitable);
        pause = std::min(2 * pause, std::chrono::milliseconds{8000});
    }
}

/// Runs `body(arg)` (`arg` is the body's own copy of the grant or session: it may move from
/// it) and keeps its outcome: the value in `result`, or what it threw in `failure`.
template <class R, class Body, class Arg>
asio::awaitable<void> run_body_into(Body& body, Arg arg, scope_result_t<R>& result,
                                    std::exception_ptr& failure) {
    try {
        if constexpr (std::is_void_v<R>) {
            co_await body(arg);
            result.emplace();
        } else {
            R value = co_await body(arg);
            result.emplace(std::move(value));
        }
    } catch (...) {
        failure = std::current_exception();
    }
}

/// The whole scope, as a coroutine chain of its own (co_spawned by with_lock and the others):
/// its cancellation settings stay its own, and the caller's cancellation reaches it through
/// co_spawn. `acquire()` returns the awaitable acquire (with_diagnostics(as_tuple): an
/// exception_ptr and the grant); the body gets the grant.
///
/// No await throws on cancellation here (throw_if_cancelled(false)): every path reaches the
/// release once the grant is acquired. The cancellation is read from the state instead.
template <class Grant, class Acquire, class Body>
asio::awaitable<scope_result_t<body_result_t<Body, Grant>>>
hold(session s, Acquire acquire, Body body, const char* lost_message) {
    using namespace asio::experimental::awaitable_operators;
    using result_type = body_result_t<Body, Grant>;
    constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
    const auto cancelled = []() -> asio::awaitable<bool> {
        auto state = co_await asio::this_coro::cancellation_state;
        co_return state.cancelled() != asio::cancellation_type::none;
    };

    co_await asio::this_coro::throw_if_cancelled(false);
    // (Not a structured binding: the lambdas below capture `grant`, which C++20 allows for
    // a binding but clang before 16 refuses.)
    auto acquired = co_await acquire();
    if (std::get<0>(acquired)) // (nothing held: an acquire that fails or is cancelled leaves none)
        std::rethrow_exception(std::get<0>(acquired));
    std::optional<Grant> had = as_optional(std::move(std::get<1>(acquired)));
    if (!had)
        co_return std::nullopt;
    Grant& grant = *had;

    scope_result_t<result_type> result;
    std::exception_ptr failure;
    error_code lost;
    bool lost_first = false;
    // Cancelled right as the acquire completed: the body does not start.
    if (co_await cancelled()) {
        failure = std::make_exception_ptr(
            boost::system::system_error(make_error_code(asio::error::operation_aborted)));
    } else {
        // Named: the coroutines below refer to these lambdas, which must outlive them.
        auto run_body = [&] { return run_body_into<result_type>(body, grant, result, failure); };
        auto watch_loss = [&]() -> asio::awaitable<void> {
            auto [ec] = co_await grant.async_wait_lost(tuple_awaitable);
            lost = ec;
        };
        // The `||` cancels the other side and waits for it: when it completes, the body
        // has returned, also when the caller cancelled (the cancellation reaches both).
        try {
            const auto ended = co_await (run_body() || watch_loss());
            lost_first = ended.index() == 1 && lost != asio::error::operation_aborted;
        } catch (...) { // (not expected: neither side throws)
            if (!failure)
                failure = std::current_exception();
        }
    }

    // The release runs whatever happened, and nothing interrupts it.
    co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
    co_await release_grant(grant, s);

    if (lost_first)
        throw conclave::error(lost, diagnostics{0, {}, lost_message});
    if (failure)
        std::rethrow_exception(failure);
    if (!result) // (the body neither returned nor threw: not expected of an awaitable)
        throw boost::system::system_error(make_error_code(asio::error::operation_aborted));
    co_return result;
}

/// with_session's scope, as a coroutine of its own (like hold()): creates the session,
/// renews it while `body(session)` runs, cancels the body when the session is lost, and
/// destroys the session however the body ended, awaited and bounded by destroy_timeout.
template <class Body>
asio::awaitable<scope_result_t<body_result_t<Body, session>>>
session_scope(client c, session_config cfg, Body body) {
    using namespace asio::experimental::awaitable_operators;
    using result_type = body_result_t<Body, session>;
    constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

    co_await asio::this_coro::throw_if_cancelled(false);
    auto created =
        co_await session::async_create(c, std::move(cfg), with_diagnostics(tuple_awaitable));
    if (std::get<0>(created))
        std::rethrow_exception(std::get<0>(created));
    session& s = std::get<1>(created);

    scope_result_t<result_type> result;
    std::exception_ptr failure;
    error_code lost;
    bool lost_first = false;
    // The renewals: not stopped by the caller's cancellation (the destroy ends them), only
    // by this signal when the destroy could not be confirmed (the cancelled run then
    // destroys the session in the background).
    asio::cancellation_signal stop_renewing;
    auto renew = [&]() -> asio::awaitable<void> {
        co_await s.async_run(asio::bind_cancellation_slot(stop_renewing.slot(), tuple_awaitable));
    };
    auto run_body = [&] { return run_body_into<result_type>(body, s, result, failure); };
    auto watch_loss = [&]() -> asio::awaitable<void> {
        auto [ec] = co_await s.async_wait_lost(tuple_awaitable);
        lost = ec;
    };
    auto work_then_destroy = [&]() -> asio::awaitable<void> {
        co_await asio::this_coro::throw_if_cancelled(false);
        const auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none) {
            failure = std::make_exception_ptr(
                boost::system::system_error(make_error_code(asio::error::operation_aborted)));
        } else {
            // The `||` waits for the body to return, also when the caller cancelled.
            const auto ended = co_await (run_body() || watch_loss());
            lost_first = ended.index() == 1 && lost != asio::error::operation_aborted;
        }
        co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
        auto [destroy_error] = co_await s.async_destroy(tuple_awaitable);
        if (destroy_error)
            stop_renewing.emit(asio::cancellation_type::terminal);
    };
    co_await (renew() && work_then_destroy());

    if (lost_first)
        throw conclave::error(lost,
                              diagnostics{0,
                                          {},
                                          lost == errc::session_handed_over
                                              ? "the session was handed over while the body ran"
                                              : "the session was lost while the body ran"});
    if (failure)
        std::rethrow_exception(failure);
    if (!result) // (the body neither returned nor threw: not expected of an awaitable)
        throw boost::system::system_error(make_error_code(asio::error::operation_aborted));
    co_return result;
}

/// Runs a scope (hold()) as a coroutine of its own on the caller's executor. Its result:
/// the body's value, or nothing when a try did not get the grant.
template <class R, class Scope>
asio::awaitable<scope_result_t<R>> spawn_scope(Scope scope) {
    // (Each co_await a statement of its own: g++ 12 mishandles one nested in the arguments
    // of another.)
    auto ex = co_await asio::this_coro::executor;
    auto value = co_await asio::co_spawn(ex, std::move(scope), asio::use_awaitable);
    co_return value;
}

/// with_lock's result: the body's value (a grant always had).
template <class R, class Scope>
asio::awaitable<R> spawn_hold(Scope scope) {
    auto value = co_await spawn_scope<R>(std::move(scope));
    if constexpr (!std::is_void_v<R>)
        co_return std::move(*value);
}

/// try_with_lock's result: the body's value in an optional, or for a void body whether it
/// ran.
template <class R>
using try_result_t = std::conditional_t<std::is_void_v<R>, bool, std::optional<R>>;

template <class R, class Scope>
asio::awaitable<try_result_t<R>> spawn_try_hold(Scope scope) {
    auto value = co_await spawn_scope<R>(std::move(scope));
    if constexpr (std::is_void_v<R>)
        co_return value.has_value();
    else if (value)
        co_return std::optional<R>{std::move(*value)};
    else
        co_return std::nullopt;
}

/// with_lock and its kin in one call: `start(token)` starts the grant's acquire with the
/// token it is given, and the scope (hold()) runs as a coroutine of its own. Its result is
/// the body's.
template <class Grant, class Body, class Start>
asio::awaitable<body_result_t<Body, Grant>> hold_scope(session& s, Body body,
                                                       const char* lost_message, Start start) {
    auto acquire = [start = std::move(start)]() mutable {
        return start(with_diagnostics(asio::as_tuple(asio::use_awaitable)));
    };
    return spawn_hold<body_result_t<Body, Grant>>(
        hold<Grant>(s, std::move(acquire), std::move(body), lost_message));
}

/// try_with_lock and its kin: hold_scope whose result says whether the body ran.
template <class Grant, class Body, class Start>
asio::awaitable<try_result_t<body_result_t<Body, Grant>>>
try_hold_scope(session& s, Body body, const char* lost_message, Start start) {
    auto acquire = [start = std::move(start)]() mutable {
        return start(with_diagnostics(asio::as_tuple(asio::use_awaitable)));
    };
    return spawn_try_hold<body_result_t<Body, Grant>>(
        hold<Grant>(s, std::move(acquire), std::move(body), lost_message));
}

} // namespace conclave::detail
