// SPDX-License-Identifier: BSL-1.0
// One connection of the dev agent's HTTP server: its socket as the stream Beast reads and
// writes, the deadlines of its reads and writes (one watchdog timer), and the probe that
// tells a waiting blocking query its client went away.
#pragma once

#include "devagent/src/server/limits.hpp"
#include "devagent/src/store/blocking.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

namespace conclave::dev::detail {

// A connection is also the stream Beast reads and writes (AsyncReadStream and
// AsyncWriteStream over its socket), with boost::beast::tcp_stream's timeouts kept another way.
// tcp_stream arms, and cancels, a timer around every read and write (two timer operations and
// their handlers per request, a visible share of a request's cost). Here each operation only
// records its deadline, and one watchdog timer, armed at most watchdog_period ahead, checks
// it when it fires: a deadline earlier than the watchdog's re-arms it, so every deadline is
// enforced on time. On expiry the socket is closed, which fails the pending operation as
// tcp_stream's timeout does.
// Not final: Asio's executor detection derives from the I/O objects it is given.
struct connection : disconnect_probe, std::enable_shared_from_this<connection> {
    using clock = std::chrono::steady_clock;
    using executor_type = boost::asio::ip::tcp::socket::executor_type;

    explicit connection(boost::asio::ip::tcp::socket s)
        : sock(std::move(s))
        , watchdog(sock.get_executor()) {}

    boost::asio::ip::tcp::socket sock;
    boost::asio::steady_timer watchdog;
    clock::time_point deadline = clock::time_point::max();
    clock::time_point watchdog_at = clock::time_point::max(); ///< max: not waiting
    bool finished = false;
    bool timed_out = false; ///< the watchdog closed it (a client too slow or idle too long)
    bool draining = false;  ///< (close_gracefully(): the end of its drain is no timeout)
    std::function<void()> on_gone;
    clock::time_point counted_until_time{}; ///< (disconnect_probe::counted_until)
    std::uint64_t generation = 0;
    bool armed = false;

    boost::asio::ip::tcp::socket& socket() { return sock; }
    executor_type get_executor() { return sock.get_executor(); }

    template <class MutableBuffers, class Token>
    auto async_read_some(const MutableBuffers& buffers, Token&& token) {
        return sock.async_read_some(buffers, std::forward<Token>(token));
    }
    template <class ConstBuffers, class Token>
    auto async_write_some(const ConstBuffers& buffers, Token&& token) {
        return sock.async_write_some(buffers, std::forward<Token>(token));
    }

    /// The operations that follow must end by `at` (tcp_stream::expires_at).
    void expires_at(clock::time_point at) {
        deadline = at;
        if (deadline < watchdog_at)
            wait_until(std::min(deadline, clock::now() + watchdog_period));
    }
    /// The operations that follow must end within d (tcp_stream::expires_after).
    void expires_after(clock::duration d) { expires_at(clock::now() + d); }
    /// The operations that follow must end within d of `from`: one of agent_config's
    /// timeouts, where 0 (or less) means none, as in Go's http.Server (so does one too far
    /// ahead for the clock).
    void expires_within(clock::time_point from, std::chrono::milliseconds d) {
        if (d <= d.zero() || d >= std::chrono::duration_cast<std::chrono::milliseconds>(
                                      clock::time_point::max() - from))
            expires_never();
        else
            expires_at(from + d);
    }
    /// No time limit (tcp_stream::expires_never): a blocking query may wait 10 minutes.
    void expires_never() { deadline = clock::time_point::max(); }
    /// The connection is done: stop the watchdog (its handler holds the connection).
    void finish() {
        finished = true;
        watchdog.cancel();
    }

    void wait_until(clock::time_point at) {
        watchdog_at = at;
        watchdog.expires_at(at); // cancels a pending wait: its handler sees operation_aborted
        watchdog.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
            self->watchdog_fired(ec);
        });
    }

    void watchdog_fired(const boost::system::error_code& ec) {
        if (ec || finished)
            return; // re-armed meanwhile, or done
        watchdog_at = clock::time_point::max();
        const auto now = clock::now();
        if (now >= deadline) {
            timed_out = !draining;
            boost::system::error_code ignored;
            sock.close(ignored);
            return;
        }
        wait_until(std::min(deadline, now + watchdog_period));
    }

    void arm(std::function<void()> cb) override {
        on_gone = std::move(cb);
        armed = true;
        const std::uint64_t gen = ++generation;
        auto self = shared_from_this();
        sock.async_wait(
            boost::asio::ip::tcp::socket::wait_read,
            [self, gen](const boost::system::error_code& ec) { self->probe_ready(ec, gen); });
    }

    void counted_until(clock::time_point until) override { counted_until_time = until; }

    void disarm() override {
        if (!armed)
            return;
        armed = false;
        ++generation;
        on_gone = nullptr;
        boost::system::error_code ec;
        sock.cancel(ec);
    }

    void probe_ready(const boost::system::error_code& ec, std::uint64_t gen) {
        if (ec == boost::asio::error::operation_aborted || gen != generation || !armed)
            return;
        bool gone = static_cast<bool>(ec);
        if (!gone) {
            char byte = 0;
            boost::system::error_code rec;
            const std::size_t n = sock.receive(boost::asio::buffer(&byte, 1),
                                               boost::asio::ip::tcp::socket::message_peek, rec);
            gone = rec || n == 0;
        }
        if (!gone)
            return; // the next request is already here (pipelining): stop watching
        armed = false;
        auto cb = std::move(on_gone);
        on_gone = nullptr;
        if (cb)
            cb();
    }
};

} // namespace conclave::dev::detail
