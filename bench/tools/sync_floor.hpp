// SPDX-License-Identifier: BSL-1.0
// The CPU floor under any client of the lock cycle: the cheapest synchronous client.
#pragma once

#include <conclave/config.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace conclave::bench {

struct sync_floor {
    double cycles = 0;
    double cpu_us_per_cycle = 0; ///< user + system CPU of the process per cycle
    double cycles_per_s = 0;
};

/// The floor client on one connection, kept between runs (the cycle scenario gives it
/// slices between the lock's). Its cycles block the calling thread: the agent must run in
/// another process, and `session` is not renewed meanwhile.
class floor_client {
public:
    /// Connects and warms up; unusable (run_for gives nothing) when `cfg` is not plain TCP
    /// or a request fails.
    floor_client(const client_config& cfg, const std::string& key, const std::string& session);
    ~floor_client();
    floor_client(const floor_client&) = delete;
    floor_client& operator=(const floor_client&) = delete;

    /// Whether it connected and its warm-up cycles went through.
    bool usable() const { return impl_ != nullptr; }
    /// Cycles for `d` (at most `most`); how many, or nothing once a request failed.
    std::optional<std::size_t> run_for(std::chrono::nanoseconds d, std::size_t most = SIZE_MAX);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// Runs the raw acquire + release cycle (two /v1/txn requests as the lock sends them) for
/// `seconds` with blocking sockets, HTTP written by hand and nothing
/// parsed beyond the status line and Content-Length. No real client can spend less CPU
/// per cycle: what is left is the kernel's send, receive, sleep and wake-up. Used to put
/// the client's own CPU per cycle next to that floor, in the same run on the same agent.
/// Empty when `cfg` is not plain TCP or a request fails. Blocks the calling thread: the
/// agent must run in another process, and `session` is not renewed meanwhile (keep
/// `seconds` well under its TTL).
/// With `cycles` > 0, runs that many cycles instead (after the warm-up), whatever the time.
std::optional<sync_floor> measure_sync_floor(const client_config& cfg, const std::string& key,
                                             const std::string& session, double seconds,
                                             long cycles = 0);

} // namespace conclave::bench
