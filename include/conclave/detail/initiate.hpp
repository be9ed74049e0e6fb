// The one way conclave's public async_* templates start an operation.
#pragma once

#include <conclave/detail/asio_fwd.hpp>

#include <utility>

namespace conclave::detail {

/// Starts an asynchronous operation with completion signature `Signature` for any
/// completion token: `impl(args..., handler)` is a plain function defined in a .cpp, taking
/// the (decayed) arguments and a type-erased handler. Keeps every public async_* a one-liner
/// and its implementation, with Beast and Boost.JSON, out of the headers.
template <class Signature, class Token, class Impl, class... Args>
auto initiate(Token& token, Impl impl, Args&&... args) {
    return asio::async_initiate<Token, Signature>(
        [impl](auto handler, auto&&... a) {
            impl(std::forward<decltype(a)>(a)...,
                 asio::any_completion_handler<Signature>(std::move(handler)));
        },
        token, std::forward<Args>(args)...);
}

} // namespace conclave::detail
