// SPDX-License-Identifier: BSL-1.0
// What both consumer programs do with conclave: take a lock, check that it is held, release
// it, and print what happened; the exit status says whether it worked.
#pragma once

#include <conclave/conclave.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdio>
#include <exception>
#include <functional>

namespace consumer {

namespace asio = boost::asio;
using namespace std::chrono_literals;

inline asio::awaitable<int> take_and_release(conclave::client consul) {
    auto session = co_await conclave::session::async_create(
        consul, conclave::session_config{}.with_ttl(10s).with_lock_delay(0ms));
    conclave::lock lock{consul, "consumer/lock"};
    auto lease = co_await lock.async_acquire(session);
    const bool held = lease.held().has_value();
    co_await lease.async_release();
    co_await session.async_destroy();
    std::printf("conclave %s: lock %s and released\n", CONCLAVE_VERSION_STRING,
                held ? "held" : "NOT held");
    co_return held ? 0 : 1;
}

/// Runs take_and_release against `cfg` on `ioc` until done (or until `ioc` is stopped).
inline int run_lock_cycle(asio::io_context& ioc, const conclave::client_config& cfg,
                          const std::function<void()>& after = {}) {
    conclave::client consul{ioc.get_executor(), cfg};
    int status = 2;
    asio::co_spawn(ioc, take_and_release(consul), [&](std::exception_ptr e, int result) {
        status = result;
        if (after)
            after();
        if (!e)
            return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            std::fprintf(stderr, "consumer: %s\n", ex.what());
            status = 1;
        }
    });
    ioc.run();
    return status;
}

} // namespace consumer
