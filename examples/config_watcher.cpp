// SPDX-License-Identifier: BSL-1.0
// A config watcher: follows every key under a prefix and prints the latest configuration
// whenever it changes. Bursts of writes arrive as one snapshot (the latest state).
//
//   config_watcher --dev            writes a few settings on an embedded agent meanwhile
//   config_watcher [prefix]         against CONSUL_HTTP_ADDR (default config/app/)
//
// Ctrl+C ends the watch (the blocking query in flight is cancelled).
#include "example_main.hpp"

#include <conclave/watch.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

namespace {

asio::awaitable<void> print_changes(conclave::client& consul, std::string prefix, int limit) {
    // At most one snapshot per 200 ms: a burst of writes is reported once, as its result.
    conclave::watch config{consul, conclave::watch::prefix(prefix),
                           conclave::watch_options{}.with_min_interval(200ms)};
    for (int n = 0; n != limit; ++n) {
        auto snap = co_await config.async_next();
        std::printf("configuration at index %llu:\n", static_cast<unsigned long long>(snap.index));
        for (const auto& e : snap.entries)
            std::printf("  %s = %s\n", e.key.c_str(), e.value.c_str());
    }
}

// --dev: an operator changing settings, one burst of three writes among them.
asio::awaitable<void> operator_writes(conclave::client& consul) {
    auto pause = [](std::chrono::milliseconds d) -> asio::awaitable<void> {
        asio::steady_timer t{co_await asio::this_coro::executor, d};
        co_await t.async_wait(asio::use_awaitable);
    };
    co_await consul.async_kv_put("config/app/threads", "4");
    co_await pause(300ms);
    co_await consul.async_kv_put("config/app/threads", "8");
    co_await consul.async_kv_put("config/app/log", "debug");
    co_await consul.async_kv_put("config/app/log", "info");
    co_await pause(300ms);
    co_await consul.async_kv_delete("config/app/log");
    co_await pause(5s); // (the watcher ends first)
}

} // namespace

int main(int argc, char** argv) {
    return examples::run_example(
        "config_watcher", argc, argv,
        [argc, argv](conclave::client& consul, bool dev) -> asio::awaitable<void> {
            if (!dev) {
                co_await print_changes(consul, argc > 1 ? argv[1] : "config/app/", -1);
                co_return;
            }
            // Empty, then threads=4, then threads=8 with log=info (a burst), then no log.
            co_await (print_changes(consul, "config/app/", 4) || operator_writes(consul));
            co_await consul.async_kv_delete("config/app/",
                                            conclave::kv_delete_options{}.with_recurse());
        });
}
