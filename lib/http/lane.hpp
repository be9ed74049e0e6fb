// SPDX-License-Identifier: BSL-1.0
// A cap on how many pooled connections blocking queries may hold at once.
//
// Why: a blocking query holds its connection for up to its whole wait (minutes). With many
// watches, waiters or monitors, long polls could take every connection of the pool, and a
// release, a session renewal or any write would queue behind them until its deadline. The
// lane keeps some connections for short requests: blocking queries beyond the cap wait
// their turn (in FIFO order) before they even ask the pool for a connection.
#pragma once

#include <conclave/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <list>
#include <memory>
#include <utility>

namespace conclave::detail::http {

namespace asio = boost::asio;

class lane : public std::enable_shared_from_this<lane> {
public:
    using clock = std::chrono::steady_clock;

    /// `limit` holders at once (at least 1).
    explicit lane(std::size_t limit)
        : limit_(limit == 0 ? 1 : limit) {}

    /// A place in the lane; leaving it (destruction) lets the next waiter in.
    class ticket {
    public:
        ticket() = default;
        explicit ticket(std::shared_ptr<lane> l)
            : owner_(std::move(l)) {}
        ticket(ticket&& o) noexcept
            : owner_(std::move(o.owner_)) {}
        ticket& operator=(ticket&& o) noexcept {
            if (this != &o) {
                release();
                owner_ = std::move(o.owner_);
            }
            return *this;
        }
        ~ticket() { release(); }
        explicit operator bool() const noexcept { return owner_ != nullptr; }

    private:
        void release() {
            if (owner_)
                std::exchange(owner_, nullptr)->leave();
        }
        std::shared_ptr<lane> owner_;
    };

    /// A place within `deadline`: errc::timeout after it, operation_aborted when the
    /// calling coroutine is cancelled.
    asio::awaitable<std::pair<error_code, ticket>> enter(clock::time_point deadline) {
        using result = std::pair<error_code, ticket>;
        if (used_ < limit_) {
            ++used_;
            co_return result{error_code{}, ticket{shared_from_this()}};
        }
        waiter w{co_await asio::this_coro::executor, deadline};
        const auto pos = waiters_.insert(waiters_.end(), &w);
        auto [ec] = co_await w.timer.async_wait(asio::as_tuple(asio::use_awaitable));
        if (w.granted) // (leave() took it off the list and counted it in)
            co_return result{error_code{}, ticket{shared_from_this()}};
        waiters_.erase(pos);
        co_return result{ec ? error_code{asio::error::operation_aborted}
                            : make_error_code(errc::timeout),
                         ticket{}};
    }

    std::size_t in_use() const noexcept { return used_; }
    std::size_t limit() const noexcept { return limit_; }

    /// Whether a blocking read of one key should share a query on its folder rather than
    /// take a place of its own: the places left (taken or waited for) are down to a reserve,
    /// an eighth of the lane, which keeps room for the shared queries themselves and for
    /// other blocking queries (lists, sessions).
    bool crowded() const noexcept {
        const std::size_t reserve = limit_ <= 1 ? 0 : std::max<std::size_t>(1, limit_ / 8);
        return used_ + waiters_.size() >= limit_ - reserve;
    }

    /// A new cap (at least 1). Lowered below the places taken, the holders keep theirs
    /// until they leave (a blocking query cannot be ended early: Consul keeps counting its
    /// connection until its wait is over) and nobody gets in meanwhile. Raised, it lets
    /// waiters in at once.
    void set_limit(std::size_t limit) {
        limit_ = limit == 0 ? 1 : limit;
        while (used_ < limit_ && !waiters_.empty()) {
            ++used_;
            grant_front();
        }
    }

private:
    struct waiter {
        waiter(const asio::any_io_executor& ex, clock::time_point deadline)
            : timer(ex, deadline) {}
        asio::steady_timer timer;
        bool granted = false;
    };

    void leave() {
        if (waiters_.empty() || used_ > limit_) {
            --used_;
            return;
        }
        grant_front(); // the place passes on; used_ is unchanged
    }

    void grant_front() {
        waiter* next = waiters_.front();
        waiters_.pop_front();
        next->granted = true;
        next->timer.cancel();
    }

    std::size_t limit_;
    std::size_t used_ = 0;
    std::list<waiter*> waiters_;
};

/// How many of `max_connections` blocking queries may hold: all but an eighth (at least
/// one), so short requests always have a connection; a pool of one is shared.
inline std::size_t blocking_lane_limit(std::size_t max_connections) {
    if (max_connections <= 1)
        return 1;
    return max_connections - std::max<std::size_t>(1, max_connections / 8);
}

} // namespace conclave::detail::http
