// SPDX-License-Identifier: BSL-1.0
// The one way conclave's public async_* templates start an operation.
#pragma once

#include <conclave/detail/asio_fwd.hpp>
#include <conclave/with_diagnostics.hpp>

#include <type_traits>
#include <utility>

namespace conclave::detail {

/// An initiation object: `start(route, handler, args...)`, where `route` is where the
/// operation writes its diagnostics for with_diagnostics (null for other tokens).
template <class Signature, class Start>
struct initiation : diagnosable_initiation {
    explicit initiation(Start s)
        : start(std::move(s)) {}
    Start start;

    template <class Handler, class... Args>
    void operator()(Handler&& handler, Args&&... args) {
        start(route, asio::any_completion_handler<Signature>(std::forward<Handler>(handler)),
              std::forward<Args>(args)...);
    }
};

template <class Signature, class Token, class Start, class... Args>
auto initiate_with(Token& token, Start start, Args&&... args) {
    return asio::async_initiate<Token, Signature>(initiation<Signature, Start>{std::move(start)},
                                                  token, std::forward<Args>(args)...);
}

/// Starts an asynchronous operation with completion signature `Signature` for any
/// completion token: `impl(args..., handler)` is a plain function defined in a .cpp, taking
/// the (decayed) arguments and a type-erased handler; an `impl(args..., route, handler)`
/// also gets the diagnostics route. Keeps every public async_* a one-liner and its
/// implementation, with Beast and Boost.JSON, out of the headers.
template <class Signature, class Token, class Impl, class... Args>
auto initiate(Token& token, Impl impl, Args&&... args) {
    auto start = [impl](diagnostics_route* route, auto handler, auto&&... a) {
        if constexpr (std::is_invocable_v<Impl, decltype(a)..., diagnostics_route*,
                                          decltype(handler)>)
            impl(std::forward<decltype(a)>(a)..., route, std::move(handler));
        else
            impl(std::forward<decltype(a)>(a)..., std::move(handler));
    };
    return initiate_with<Signature>(token, std::move(start), std::forward<Args>(args)...);
}

} // namespace conclave::detail
