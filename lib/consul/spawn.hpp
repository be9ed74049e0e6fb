// SPDX-License-Identifier: BSL-1.0
// Runs an internal coroutine as the implementation of a public async_* operation.
#pragma once

#include <conclave/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <utility>

namespace conclave::detail {

namespace asio = boost::asio;

/// The error code an escaped exception stands for. Cancellation surfaces inside Asio
/// coroutines as a thrown operation_aborted; anything else unexpected becomes bad_response.
inline error_code error_from_exception(std::exception_ptr e) noexcept {
    try {
        std::rethrow_exception(e);
    } catch (const boost::system::system_error& se) {
        return se.code();
    } catch (...) {
        return make_error_code(errc::bad_response);
    }
}

/// co_spawns `op` and completes `handler` with `convert(result)` (an error_code and a T).
/// The conversion runs in the completion, so an operation whose public result differs from
/// its coroutine's needs no wrapper coroutine: one frame less per pending operation, which
/// counts where thousands of them wait.
template <class T, class U, class Convert>
void spawn_op(asio::any_io_executor ex, asio::awaitable<std::pair<error_code, U>> op,
              asio::any_completion_handler<void(error_code, T)> handler, Convert convert) {
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto handler_ex = asio::get_associated_executor(handler, ex);
    auto complete = [h = std::move(handler), convert](std::exception_ptr e,
                                                      std::pair<error_code, U> r) mutable {
        if (e) {
            std::move(h)(error_from_exception(e), T{});
        } else {
            std::pair<error_code, T> out = convert(std::move(r));
            std::move(h)(out.first, std::move(out.second));
        }
    };
    asio::co_spawn(
        ex, std::move(op),
        asio::bind_cancellation_slot(slot, asio::bind_executor(handler_ex, std::move(complete))));
}

/// co_spawns `op` and completes `handler` with its (error_code, T). The handler's
/// cancellation slot drives the coroutine's cancellation; its executor runs the completion.
template <class T>
void spawn_op(asio::any_io_executor ex, asio::awaitable<std::pair<error_code, T>> op,
              asio::any_completion_handler<void(error_code, T)> handler) {
    spawn_op(ex, std::move(op), std::move(handler), [](std::pair<error_code, T> r) { return r; });
}

/// The same for operations that complete with `void(error_code)`.
inline void spawn_op(asio::any_io_executor ex, asio::awaitable<error_code> op,
                     asio::any_completion_handler<void(error_code)> handler) {
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto handler_ex = asio::get_associated_executor(handler, ex);
    auto complete = [h = std::move(handler)](std::exception_ptr e, error_code ec) mutable {
        std::move(h)(e ? error_from_exception(e) : ec);
    };
    asio::co_spawn(
        ex, std::move(op),
        asio::bind_cancellation_slot(slot, asio::bind_executor(handler_ex, std::move(complete))));
}

} // namespace conclave::detail
