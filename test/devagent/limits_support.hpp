// SPDX-License-Identifier: BSL-1.0
// What the dev agent's HTTP limits tests share (limits_*test.cpp): raw connections that send
// any bytes and read the agent's answer until it closes, and the waits and checks on them.
#pragma once

#include "agent_fixture.hpp"
#include "support/cancel_after.hpp"
#include "support/catch.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

namespace conclave::test::limits {

using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

inline constexpr auto use = asio::as_tuple(asio::use_awaitable);

/// A raw connection: the bytes the test sends, and what the agent answers until it closes.
struct raw_conn {
    struct ending {
        std::string bytes;
        bool closed = false; ///< the agent closed it (not the test's limit)
        double seconds = 0;  ///< from the call to the close
    };

    tcp::socket sock;

    explicit raw_conn(const asio::any_io_executor& ex)
        : sock(ex) {}

    asio::awaitable<bool> connect(std::uint16_t port) {
        auto [ec] = co_await sock.async_connect({asio::ip::make_address("127.0.0.1"), port}, use);
        co_return !ec;
    }
    /// Writes `bytes` (not copied: a flood shares one payload). False when the agent has
    /// closed the connection meanwhile.
    asio::awaitable<bool> send(std::string_view bytes) {
        auto [ec, n] = co_await asio::async_write(sock, asio::buffer(bytes), use);
        (void)n;
        co_return !ec;
    }
    asio::awaitable<ending> read_until_close(std::chrono::milliseconds limit = 10s) {
        ending out;
        const auto start = std::chrono::steady_clock::now();
        cancel_after stop(sock.get_executor(), limit);
        std::array<char, 16384> chunk;
        for (;;) {
            auto [ec, n] = co_await sock.async_read_some(asio::buffer(chunk), stop.bind(use));
            out.bytes.append(chunk.data(), n);
            if (ec) {
                out.closed = ec != asio::error::operation_aborted;
                break;
            }
        }
        out.seconds = seconds(std::chrono::steady_clock::now() - start);
        co_return out;
    }
};

/// Sends `bytes` on a new connection and reads the answer until the agent closes it.
inline asio::awaitable<raw_conn::ending> exchange(std::uint16_t port, std::string bytes) {
    raw_conn c(co_await asio::this_coro::executor);
    const bool connected = co_await c.connect(port);
    REQUIRE(connected);
    co_await c.send(bytes);
    co_return co_await c.read_until_close();
}

/// Waits for a condition on the agent's counters (an event: no fixed sleep decides).
template <class Predicate>
asio::awaitable<void> until(Predicate done, std::chrono::milliseconds limit = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("the agent did not get there in time");
        co_await sleep_for(5ms);
    }
}

inline std::string body_of(const std::string& answer) {
    const auto at = answer.find("\r\n\r\n");
    return at == std::string::npos ? std::string() : answer.substr(at + 4);
}

inline bool has_header(const std::string& answer, std::string_view line) {
    const std::string head = answer.substr(0, answer.find("\r\n\r\n") + 2);
    return head.find("\r\n" + std::string(line) + "\r\n") != std::string::npos;
}

/// A GET whose head is about `size` bytes: header fields of 1,000 bytes each (all legal).
inline std::string large_head(std::string_view target, std::size_t size,
                              std::string_view extra = {}) {
    std::string head = "GET " + std::string(target) + " HTTP/1.1\r\nHost: a\r\n";
    head += extra;
    for (std::size_t i = 0; head.size() < size; ++i)
        head += "X-Pad-" + std::to_string(i) + ": " + std::string(990, 'p') + "\r\n";
    return head + "\r\n";
}

} // namespace conclave::test::limits
