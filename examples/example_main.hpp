// SPDX-License-Identifier: BSL-1.0
// What every example's main() does: a client from the Consul environment variables (or an
// embedded dev agent with --dev), Ctrl+C as cancellation of the example's coroutine, and
// errors printed instead of thrown. --demo runs the self-contained scenario of --dev
// against the Consul the environment names (the tests run it so on a real Consul).
#pragma once

#include <conclave/client.hpp>
#include <conclave/dev/agent.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/multiple_exceptions.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace examples {

namespace asio = boost::asio;

/// The example's body: gets the client and whether it runs its self-contained scenario
/// (--dev or --demo).
using example_body = std::function<asio::awaitable<void>(conclave::client&, bool demo)>;

/// The failure that tells: Asio's `&&` whose operands all failed (as they all do on Ctrl+C)
/// reports them together, the first one first.
inline std::exception_ptr first_failure(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (const asio::multiple_exceptions& several) {
        return first_failure(several.first_exception());
    } catch (...) {
        return e;
    }
}

/// Runs `make(0)` ... `make(n - 1)` (each returning an asio::awaitable<void>) side by side
/// until all have returned. The first failure cancels the others and is rethrown once they
/// have returned (each releases what it holds on the way out); cancelling the caller (Ctrl+C)
/// cancels them all the same way.
template <class Make>
asio::awaitable<void> run_all(int n, Make make) {
    auto ex = co_await asio::this_coro::executor;
    std::vector<decltype(asio::co_spawn(ex, make(0), asio::deferred))> group;
    for (int i = 0; i < n; ++i)
        group.push_back(asio::co_spawn(ex, make(i), asio::deferred));
    auto [order, failures] =
        co_await asio::experimental::make_parallel_group(std::move(group))
            .async_wait(asio::experimental::wait_for_one_error(), asio::use_awaitable);
    for (auto i : order)
        if (failures[i])
            std::rethrow_exception(failures[i]);
}

/// Waits `d` (the examples' stand-in for work, and their scenarios' pauses).
inline asio::awaitable<void> pause(std::chrono::milliseconds d) {
    asio::steady_timer t{co_await asio::this_coro::executor, d};
    co_await t.async_wait(asio::use_awaitable);
}

/// Runs `body` until it returns, Ctrl+C (SIGINT/SIGTERM) cancels it, or it fails.
/// `configure` may add to the client's settings (a logger, an observer). Returns the process
/// exit status.
inline int run_example(const char* name, int argc, char** argv, example_body body,
                       const std::function<void(conclave::client_config&)>& configure = {}) {
    // Each line as it is printed, also into a pipe or a container's log.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    const bool dev = argc > 1 && std::string_view{argv[1]} == "--dev";
    const bool demo = dev || (argc > 1 && std::string_view{argv[1]} == "--demo");
    asio::io_context ioc;
    std::optional<conclave::dev::agent> agent;
    conclave::client_config cfg;
    try {
        cfg = conclave::config_from_env();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", name, e.what()); // names the variable to fix
        return 1;
    }
    if (dev) {
        // No Consul at hand: an in-memory agent in this process, same HTTP API.
        conclave::dev::agent_config agent_cfg;
        agent_cfg.port = 0; // any free port: several examples may run at once
        agent.emplace(ioc.get_executor(), agent_cfg);
        try {
            agent->start();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: cannot start the embedded agent: %s\n", name, e.what());
            return 1;
        }
        cfg.kind = conclave::client_config::transport::tcp;
        cfg.host = "127.0.0.1";
        cfg.port = agent->port();
        cfg.tls = {};
    }
    if (configure)
        configure(cfg);
    conclave::client consul{ioc.get_executor(), cfg};

    // Ctrl+C cancels the body (terminal cancellation): it releases what it holds and
    // destroys its sessions on the way out, instead of leaving them to expire.
    asio::cancellation_signal stop;
    asio::signal_set signals{ioc, SIGINT, SIGTERM};
    signals.async_wait([&](boost::system::error_code ec, int) {
        if (!ec) {
            std::fprintf(stderr, "%s: stopping (cleaning up)\n", name);
            stop.emit(asio::cancellation_type::terminal);
        }
    });

    int status = 0;
    asio::co_spawn(ioc, body(consul, demo),
                   asio::bind_cancellation_slot(stop.slot(), [&](std::exception_ptr e) {
                       signals.cancel();
                       if (agent)
                           agent->stop();
                       if (!e)
                           return;
                       try {
                           std::rethrow_exception(first_failure(e));
                       } catch (const boost::system::system_error& ex) {
                           if (ex.code() == asio::error::operation_aborted)
                               return; // stopped by Ctrl+C: a clean exit
                           std::fprintf(stderr, "%s: %s\n", name, ex.what());
                           status = 1;
                       } catch (const std::exception& ex) {
                           std::fprintf(stderr, "%s: %s\n", name, ex.what());
                           status = 1;
                       }
                   }));
    ioc.run();
    return status;
}

} // namespace examples
