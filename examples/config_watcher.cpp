// SPDX-License-Identifier: BSL-1.0
// A config watcher: follows every key under a prefix and prints the latest configuration
// whenever it changes. Writes made while the watcher is busy, or before its next query
// (at most one every 200 ms), arrive as one snapshot, the latest state: the watcher never
// falls behind.
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

#include <functional>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

namespace {

using snapshot_test = std::function<bool(const conclave::watch_snapshot&)>;

// Prints the configuration each time it changed, until `last` says it is the last one.
asio::awaitable<void> print_changes(conclave::client& consul, std::string prefix,
                                    snapshot_test last) {
    // At most one snapshot per 200 ms, the latest.
    conclave::watch config{consul, conclave::watch::prefix(prefix),
                           conclave::watch_options{}.with_min_interval(200ms)};
    for (;;) {
        auto snap = co_await config.async_next();
        std::printf("configuration at index %llu:\n", static_cast<unsigned long long>(snap.index));
        for (const auto& e : snap.entries)
            std::printf("  %s = %s\n", e.key.c_str(), e.value.c_str());
        if (snap.entries.empty())
            std::printf("  (nothing set)\n");
        if (last(snap))
            co_return;
    }
}

// --dev: an operator changing settings, a burst of four writes, then one more; at the end,
// config/app/threads = 8 alone.
asio::awaitable<void> operator_writes(conclave::client& consul) {
    auto pause = [](std::chrono::milliseconds d) -> asio::awaitable<void> {
        asio::steady_timer t{co_await asio::this_coro::executor, d};
        co_await t.async_wait(asio::use_awaitable);
    };
    co_await pause(300ms); // (after the watcher's first snapshot: nothing set yet)
    co_await consul.async_kv_put("config/app/threads", "4");
    // The watcher's next query starts 200 ms after its last one: what is written meanwhile
    // comes back as one snapshot.
    co_await consul.async_kv_put("config/app/log", "debug");
    co_await consul.async_kv_put("config/app/log", "info");
    co_await consul.async_kv_put("config/app/threads", "8");
    co_await pause(300ms);
    co_await consul.async_kv_delete("config/app/log");
}

bool final_state(const conclave::watch_snapshot& snap) {
    return snap.entries.size() == 1 && snap.entries.front().value == "8";
}

} // namespace

int main(int argc, char** argv) {
    return examples::run_example(
        "config_watcher", argc, argv,
        [argc, argv](conclave::client& consul, bool dev) -> asio::awaitable<void> {
            if (!dev) {
                auto never = [](const conclave::watch_snapshot&) { return false; };
                co_await print_changes(consul, argc > 1 ? argv[1] : "config/app/", never);
                co_return;
            }
            // Side by side: nothing, then threads=4 (the burst's first write wakes the
            // watcher), then the rest of the burst as one snapshot, then threads=8 alone.
            co_await (print_changes(consul, "config/app/", final_state) && operator_writes(consul));
            co_await consul.async_kv_delete("config/app/",
                                            conclave::kv_delete_options{}.with_recurse());
        });
}
