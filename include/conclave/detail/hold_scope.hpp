// SPDX-License-Identifier: BSL-1.0
// with_lock / with_permit / with_leadership (conclave/hold_scope.hpp): running a body while a
// grant is held, and ending the grant however the body ends.
#pragma once

#include <conclave/error.hpp>
#include <conclave/session.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

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

/// The body's outcome (a value, or nothing for a void body).
template <class R>
struct body_value {
    R value;
};
template <>
struct body_value<void> {};

/// After a release that failed (Consul unreachable: the outcome is unknown), tries again with
/// growing pauses until it succeeds or the session is lost, so that a key is not left held
/// by a session that keeps renewing.
template <class Grant>
asio::awaitable<void> release_until_done(Grant grant, session s) {
    asio::steady_timer pause{co_await asio::this_coro::executor};
    std::chrono::milliseconds wait{250};
    while (!s.lost()) {
        pause.expires_after(wait);
        co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
        auto [ec] = co_await grant.async_release(asio::as_tuple(asio::use_awaitable));
        if (!ec)
            co_return;
        wait = std::min(2 * wait, std::chrono::milliseconds{8000});
    }
}

/// Runs `body(arg)` while `grant` is held, cancels it when the grant is lost, then releases
/// the grant. Returns the body's value or rethrows its exception; throws conclave::error with
/// the loss reason when the grant was lost first.
template <class Grant, class Arg, class Body>
asio::awaitable<body_result_t<Body, Arg>> hold(session s, Grant grant, Arg arg, Body& body,
                                               const char* lost_message) {
    using namespace asio::experimental::awaitable_operators;
    using result_type = body_result_t<Body, Arg>;
    constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

    std::optional<body_value<result_type>> result;
    std::exception_ptr failure;
    error_code lost;
    // Named: the coroutines below refer to these lambdas, which must outlive them.
    auto run_body = [&]() -> asio::awaitable<void> {
        try {
            if constexpr (std::is_void_v<result_type>) {
                co_await body(arg);
                result.emplace();
            } else {
                result_type value = co_await body(arg);
                result.emplace(body_value<result_type>{std::move(value)});
            }
        } catch (...) {
            failure = std::current_exception();
        }
    };
    auto watch_loss = [&]() -> asio::awaitable<void> {
        auto [ec] = co_await grant.async_wait_lost(tuple_awaitable);
        lost = ec;
    };
    // The `||` cancels the other side and waits for it: when it completes, the body has
    // returned, also when this coroutine was cancelled (the cancellation reaches both).
    const auto ended = co_await (run_body() || watch_loss());
    const bool lost_first = ended.index() == 1 && lost != asio::error::operation_aborted;

    // The release runs whatever happened, cancellation included, and is not interrupted
    // (one request, bounded by the client's request timeout).
    co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
    auto [release_failure] = co_await grant.async_release(tuple_awaitable);
    if (release_failure && !s.lost())
        asio::co_spawn(co_await asio::this_coro::executor, release_until_done(grant, s),
                       asio::detached);

    if (lost_first)
        throw conclave::error(lost, diagnostics{0, {}, lost_message});
    if (failure)
        std::rethrow_exception(failure);
    if (!result) // (the body neither returned nor threw: not expected of an awaitable)
        throw boost::system::system_error(asio::error::operation_aborted);
    if constexpr (!std::is_void_v<result_type>)
        co_return std::move(result->value);
}

} // namespace conclave::detail
