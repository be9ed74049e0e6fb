// SPDX-License-Identifier: BSL-1.0
/// \file
/// The default completion token of every conclave operation, with_diagnostics. An operation
/// that fails throws conclave::error, whose text carries Consul's own words ("Invalid Session
/// TTL ...", "Permission denied") and not only the error code.
#pragma once

#include <conclave/detail/asio_fwd.hpp>
#include <conclave/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associator.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <memory>
#include <type_traits>
#include <utility>

namespace conclave {

/// Adapts a completion token: an operation that would complete with `(error_code, T...)`
/// completes with `(std::exception_ptr, T...)` instead, the exception being a
/// conclave::error with the failure's diagnostics. With `asio::use_awaitable` (the
/// default), `co_await` throws it.
///
/// Only conclave's operations accept it. To handle errors as values with Consul's text,
/// await with conclave::as_outcome (below): the failure comes as an exception_ptr to a
/// conclave::error, error_code_of() gives its code. A token that keeps the error code
/// (`asio::as_tuple(asio::deferred)`, a callback) loses the text, except where the
/// operation's options take a `diagnostics*` (client requests, semaphore_options).
template <class Token>
struct with_diagnostics_t {
    Token token; ///< the adapted token
};

/// `token` adapted by with_diagnostics_t: `with_diagnostics(asio::use_awaitable)` is the
/// default token.
template <class Token>
constexpr with_diagnostics_t<std::decay_t<Token>> with_diagnostics(Token&& token) {
    return {std::forward<Token>(token)};
}

/// The completion token conclave's `async_*` functions use when given none: `co_await` it
/// in a coroutine, or combine it with `||` and `&&` (Asio's awaitable operators).
///
/// (Not `with_diagnostics(asio::deferred)`: Boost 1.81's awaitable cannot resume a deferred
/// operation that completes with an exception_ptr and a value.)
using default_token_t = with_diagnostics_t<asio::use_awaitable_t<>>;

/// The token for racing operations by hand with Asio's `||` and `&&`, which the scopes of
/// conclave/hold_scope.hpp (with_session, with_lock, ...) make unnecessary in everyday code.
/// An operation awaited with it never throws: it completes with its failure as a value,
/// `std::tuple<std::exception_ptr, T...>` (a conclave::error with Consul's text, or empty),
/// so that a `||` ends with whichever operation ends first, failures included, and cancels
/// the other. error_code_of() reads the code out of the exception_ptr.
///
///     auto ended = co_await (s.async_run(conclave::as_outcome) ||
///                            mutex.async_acquire(s, conclave::as_outcome));
inline constexpr auto as_outcome = with_diagnostics(asio::as_tuple(asio::use_awaitable));

namespace detail {

/// Where an operation writes its diagnostics for with_diagnostics: the caller's own object
/// when the options carried one, else this one.
struct diagnostics_route {
    diagnostics own;
    const diagnostics* from = &own;
    /// What a user's task run by the operation threw (errc::task_failed): thrown instead
    /// of a conclave::error.
    std::exception_ptr cause;

    /// The object an operation should fill, given the caller's (possibly null): the
    /// caller's when there is one, else the route's own. Without a route (a token other
    /// than with_diagnostics), the caller's.
    static diagnostics* target(diagnostics_route* route, diagnostics* callers) {
        if (!route)
            return callers;
        if (callers)
            route->from = callers;
        return callers ? callers : &route->own;
    }
};

/// Base of conclave's initiation objects: `route` is set when the token is with_diagnostics.
struct diagnosable_initiation {
    diagnostics_route* route = nullptr;
};

template <class Handler>
struct diagnosing_handler {
    Handler inner;
    std::unique_ptr<diagnostics_route> route; // stable address: the operation writes to it

    template <class... Ts>
    void operator()(error_code ec, Ts&&... values) {
        std::exception_ptr e;
        if (ec && route->cause) // a user task's own exception
            e = route->cause;
        else if (ec)
            e = std::make_exception_ptr(conclave::error(ec, *route->from));
        route.reset();
        std::move(inner)(std::move(e), std::forward<Ts>(values)...);
    }
};

template <class Initiation>
struct diagnosing_initiation {
    Initiation init;

    template <class Handler, class... Args>
    void operator()(Handler&& handler, Args&&... args) {
        static_assert(std::is_base_of_v<diagnosable_initiation, Initiation>,
                      "with_diagnostics works with conclave's operations only");
        auto route = std::make_unique<diagnostics_route>();
        init.route = route.get();
        std::move(init)(diagnosing_handler<std::decay_t<Handler>>{std::forward<Handler>(handler),
                                                                  std::move(route)},
                        std::forward<Args>(args)...);
    }
};

} // namespace detail
} // namespace conclave

// The wrapped handler keeps the caller's executor, allocator and cancellation slot.
template <template <class, class> class Associator, class Handler, class Default>
struct boost::asio::associator<Associator, conclave::detail::diagnosing_handler<Handler>, Default> {
    using type = typename Associator<Handler, Default>::type;

    static type get(const conclave::detail::diagnosing_handler<Handler>& h) noexcept {
        return Associator<Handler, Default>::get(h.inner);
    }
    static auto get(const conclave::detail::diagnosing_handler<Handler>& h,
                    const Default& d) noexcept
        -> decltype(Associator<Handler, Default>::get(h.inner, d)) {
        return Associator<Handler, Default>::get(h.inner, d);
    }
};

template <class Token, class... Ts>
struct boost::asio::async_result<conclave::with_diagnostics_t<Token>,
                                 void(conclave::error_code, Ts...)> {
    template <class Initiation, class RawToken, class... Args>
    static auto initiate(Initiation&& init, RawToken&& token, Args&&... args) {
        Token inner = std::forward<RawToken>(token).token;
        return async_initiate<Token, void(std::exception_ptr, Ts...)>(
            conclave::detail::diagnosing_initiation<std::decay_t<Initiation>>{
                std::forward<Initiation>(init)},
            inner, std::forward<Args>(args)...);
    }
};
