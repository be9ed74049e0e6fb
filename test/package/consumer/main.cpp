// SPDX-License-Identifier: BSL-1.0
// A program that uses conclave the way a user's daemon does (installed package, pkg-config,
// add_subdirectory or FetchContent): it takes a lock on the Consul at CONSUL_HTTP_ADDR,
// checks that it holds it, and releases it.
#include <conclave/conclave.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdio>
#include <exception>

namespace asio = boost::asio;
using namespace std::chrono_literals;

asio::awaitable<int> take_and_release(conclave::client consul) {
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

int main() {
    asio::io_context ioc;
    conclave::client consul{ioc.get_executor(), conclave::config_from_env()};
    int status = 2;
    asio::co_spawn(ioc, take_and_release(consul), [&](std::exception_ptr e, int result) {
        status = result;
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
