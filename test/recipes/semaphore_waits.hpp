// SPDX-License-Identifier: BSL-1.0
// Semaphore test helpers: waiting until an acquire stands in line, and acquires in the
// background with the order in which they were granted.
#pragma once

#include "recipes_fixture.hpp"

#include <conclave/semaphore.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace conclave::test {

// Waits (blocking queries) until `prefix` has the contender key of `session`: its acquire
// stands in line.
inline asio::awaitable<void> wait_in_line(client& c, const std::string& prefix,
                                          const std::string& session) {
    std::uint64_t index = 0;
    for (;;) {
        auto r = co_await c.async_kv_get(prefix + "/" + session,
                                         query_options::blocking(index, std::chrono::seconds{5}));
        if (r.entry && r.entry->session == session)
            co_return;
        index = r.meta.index;
    }
}

// Acquires in the background, each named, and the order in which they were granted.
struct granted_in_order {
    std::map<std::string, std::optional<permit>> permits;
    std::vector<std::string> order;

    void acquire(asio::io_context& ioc, semaphore& sem, session& s, std::string name,
                 std::uint32_t slots = 1) {
        asio::co_spawn(
            ioc,
            [this, &sem, &s, name, slots]() -> asio::awaitable<void> {
                permits[name] = co_await sem.async_acquire(s, slots);
                order.push_back(name);
            },
            asio::detached);
    }

    // Releases each permit once granted, in order, until `count` were: whether all were.
    asio::awaitable<bool> release_all(asio::io_context& ioc, std::size_t count) {
        for (std::size_t i = 0; i < count; ++i) {
            const bool granted = co_await eventually(ioc, [&] { return order.size() > i; });
            if (!granted)
                co_return false;
            co_await permits[order[i]]->async_release();
        }
        co_return true;
    }
};

} // namespace conclave::test
