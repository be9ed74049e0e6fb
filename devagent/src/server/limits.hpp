// SPDX-License-Identifier: BSL-1.0
// The HTTP server's fixed limits and timeouts.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace conclave::dev::detail {

// The limits and timeouts a client can meet are in agent_config (docs/dev-agent.md,
// "Limits"); these are the fixed ones.

// Go's net/http limits on a chunked body (net/http/internal/chunked.go, transfer.go): a
// chunk-size line, CRLF included, shorter than maxLineLength, and a trailer that fits the
// connection's 4 KiB bufio.Reader.
inline constexpr std::size_t max_chunk_line = 4096;
inline constexpr std::size_t max_trailer = 4096;
// The read buffer a connection starts with (a usual request fits), and what a connection may
// buffer of a request, head and body, without drawing on request_memory_limit.
inline constexpr std::size_t initial_buffer = 16 * 1024;
inline constexpr std::size_t free_request_bytes = 64 * 1024;
// The longest the watchdog sleeps (see connection).
inline constexpr auto watchdog_period = std::chrono::seconds(60);
// After an answer that closes the connection: how long, and how much, the client's further
// bytes are read and dropped before the close (so the answer is not lost to a TCP reset).
inline constexpr auto drain_time = std::chrono::seconds(2);
inline constexpr std::int64_t drain_bytes = 1 << 20;

} // namespace conclave::dev::detail
