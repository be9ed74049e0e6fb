// SPDX-License-Identifier: BSL-1.0
// Runs a coroutine on an io_context until it finishes, with a hard limit.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>

namespace conclave::test {

namespace asio = boost::asio;
using namespace std::chrono_literals;

/// Spawns `aw` on `ioc` and runs the context until it completes (other work, such as an
/// embedded agent, may stay pending). Throws if it did not finish within `limit`; rethrows
/// what the coroutine threw (so REQUIRE failures inside it surface in the test).
template <class T>
T run(asio::io_context& ioc, asio::awaitable<T> aw, std::chrono::milliseconds limit = 30s) {
    std::optional<T> result;
    std::exception_ptr error;
    bool done = false;
    asio::co_spawn(ioc, std::move(aw), [&](std::exception_ptr e, T v) {
        done = true;
        if (e)
            error = e;
        else
            result.emplace(std::move(v));
    });
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done && std::chrono::steady_clock::now() < deadline) {
        ioc.run_one_until(deadline);
        if (ioc.stopped())
            ioc.restart();
    }
    if (!done)
        throw std::runtime_error("test coroutine did not finish within its time limit");
    if (error)
        std::rethrow_exception(error);
    return std::move(*result);
}

inline void run(asio::io_context& ioc, asio::awaitable<void> aw,
                std::chrono::milliseconds limit = 30s) {
    auto wrapper = [](asio::awaitable<void> a) -> asio::awaitable<int> {
        co_await std::move(a);
        co_return 0;
    };
    run<int>(ioc, wrapper(std::move(aw)), limit);
}

/// Runs handlers until `done()` holds; throws after `limit`.
template <class Predicate>
void run_until(asio::io_context& ioc, Predicate done, std::chrono::milliseconds limit = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline)
            throw std::runtime_error("condition not reached within the time limit");
        ioc.run_one_until(deadline);
        if (ioc.stopped())
            ioc.restart();
    }
}

/// Runs the context for `d` (lets background work progress; not a synchronisation tool).
inline void run_for(asio::io_context& ioc, std::chrono::milliseconds d) {
    ioc.run_for(d);
    if (ioc.stopped())
        ioc.restart();
}

} // namespace conclave::test
