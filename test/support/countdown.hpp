// SPDX-License-Identifier: BSL-1.0
// Awaitable events for tests: wait for N events, or for "something changed", without polling.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstddef>

namespace conclave::test {

class countdown {
public:
    template <class Executor>
    countdown(const Executor& ex, std::size_t n)
        : timer_{ex, std::chrono::steady_clock::time_point::max()}
        , left_{n} {}

    void count_down() {
        if (left_ > 0 && --left_ == 0)
            timer_.cancel();
    }
    std::size_t left() const noexcept { return left_; }

    /// Returns once the count reached zero (at once if it already has).
    boost::asio::awaitable<void> wait() {
        while (left_ > 0)
            co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }

private:
    boost::asio::steady_timer timer_;
    std::size_t left_;
};

/// "Something changed": wakes every waiter of wait() on notify(); they re-check.
class change_event {
public:
    template <class Executor>
    explicit change_event(const Executor& ex)
        : timer_{ex, std::chrono::steady_clock::time_point::max()} {}

    void notify() { timer_.cancel(); }
    boost::asio::awaitable<void> wait() {
        co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }

private:
    boost::asio::steady_timer timer_;
};

} // namespace conclave::test
