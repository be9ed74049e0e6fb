// SPDX-License-Identifier: BSL-1.0
// One way to call any Consul endpoint: the endpoint says how to build its request and how
// to decode the reply (lib/consul/endpoints/), and one coroutine sends it.
//
// Why: the build and decode steps hold all that differs between endpoints, and need no
// socket, so they are tested on their own (test/unit/endpoints_test.cpp) and the fuzzer
// feeds their decoders directly. The public API and the recipes then go down the same
// road: call() here, client_impl::send, the pool, a connection.
#pragma once

#include "consul/client_impl.hpp"
#include "consul/spawn.hpp"

#include <conclave/error.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <concepts>
#include <memory>
#include <optional>
#include <utility>

namespace conclave::detail {

/// An endpoint: its arguments, and
/// - `build(call)`: fills the request, or refuses arguments Consul would reject or misread
///   (errc::invalid_argument, with the reason in the options' diagnostics); built once per
///   call, it may move its arguments into the request;
/// - `decode(call, reply)`: turns any reply into the result or an error (the reply's body
///   may be moved from).
///
/// Endpoints have constructors: g++ 12 destroys an aggregate temporary twice when it is
/// brace-initialised inside a co_await expression, as in `co_await call(c, kv_get{k, q})`.
template <class E>
concept endpoint_type = requires(E& e, api_call& call, api_reply& reply) {
    typename E::result;
    { e.build(call) } -> std::same_as<error_code>;
    {
        e.decode(std::as_const(call), reply)
        } -> std::same_as<std::pair<error_code, typename E::result>>;
};

/// When a call ends at the latest: with errc::timeout, if earlier than the client's own
/// request timeout (waiting for a connection included).
using call_deadline = std::optional<std::chrono::steady_clock::time_point>;

/// Builds, sends and decodes one call of `e`.
///
/// Cancelling the caller cancels the request, which then completes with operation_aborted
/// as a value, as do other exceptions from below (error_from_exception). Like any co_await,
/// the call throws operation_aborted if the caller was cancelled before it.
template <endpoint_type E>
asio::awaitable<std::pair<error_code, typename E::result>>
call(std::shared_ptr<client_impl> c, E e, call_deadline deadline = std::nullopt) {
    using result = std::pair<error_code, typename E::result>;
    try {
        api_call req = c->new_call();
        if (auto ec = e.build(req))
            co_return result{ec, {}};
        if (deadline && (!req.deadline || *deadline < *req.deadline))
            req.deadline = deadline;
        auto [ec, reply] = co_await c->send(req);
        if (ec)
            co_return result{ec, {}};
        co_return e.decode(req, reply);
    } catch (...) {
        co_return result{error_from_exception(std::current_exception()), {}};
    }
}

/// call() on the client behind a handle, for the recipes.
template <endpoint_type E>
asio::awaitable<std::pair<error_code, typename E::result>>
call(const client& c, E e, call_deadline deadline = std::nullopt) {
    return call(client_access::impl(c).shared_from_this(), std::move(e), deadline);
}

} // namespace conclave::detail
