// SPDX-License-Identifier: BSL-1.0
// The CPU floor under any client of the lock cycle: the cheapest synchronous client.
#pragma once

#include <conclave/config.hpp>

#include <optional>
#include <string>

namespace conclave::bench {

struct sync_floor {
    double cycles = 0;
    double cpu_us_per_cycle = 0; ///< user + system CPU of the process per cycle
    double cycles_per_s = 0;
};

/// Runs the raw acquire + release cycle (two /v1/txn requests as the lock sends them) for
/// `seconds` with blocking sockets, HTTP written by hand and nothing
/// parsed beyond the status line and Content-Length. No real client can spend less CPU
/// per cycle: what is left is the kernel's send, receive, sleep and wake-up. Used to put
/// the client's own CPU per cycle next to that floor, in the same run on the same agent.
/// Empty when `cfg` is not plain TCP or a request fails. Blocks the calling thread: the
/// agent must run in another process, and `session` is not renewed meanwhile (keep
/// `seconds` well under its TTL).
std::optional<sync_floor> measure_sync_floor(const client_config& cfg, const std::string& key,
                                             const std::string& session, double seconds);

} // namespace conclave::bench
