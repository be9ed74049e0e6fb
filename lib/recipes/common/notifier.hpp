// SPDX-License-Identifier: BSL-1.0
// Wakes coroutines waiting for "something changed" (timers used as a condition variable).
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <array>
#include <chrono>
#include <deque>
#include <vector>

namespace conclave::detail {

namespace asio = boost::asio;

class notifier {
public:
    using clock = std::chrono::steady_clock;

    notifier() = default;
    // Its listeners point at it.
    notifier(const notifier&) = delete;
    notifier& operator=(const notifier&) = delete;

    /// Suspends until notify_all() or `until`, whichever comes first, then returns: the
    /// caller re-checks its state. Cancellation of the calling coroutine ends the wait; the
    /// caller's next co_await then throws operation_aborted. (The waits await a deferred
    /// operation: unlike use_awaitable, that allocates no extra coroutine frame per wait.)
    asio::awaitable<void> wait(clock::time_point until) {
        asio::steady_timer timer{co_await asio::this_coro::executor, until};
        const listener on_this{*this, timer};
        co_await timer.async_wait(asio::as_tuple(asio::deferred));
    }

    /// Like wait(), woken by any of the notifiers. One timer listens to all of them:
    /// cheaper than `a.wait(t) || b.wait(t)` (which runs a coroutine per notifier and a
    /// parallel group), and it matters where thousands of waiters park or a wait is set up
    /// per lock cycle.
    template <class... Notifiers>
    static asio::awaitable<void> wait_any(clock::time_point until, Notifiers&... ns) {
        asio::steady_timer timer{co_await asio::this_coro::executor, until};
        const std::array<listener, sizeof...(Notifiers)> on_each{listener{ns, timer}...};
        co_await timer.async_wait(asio::as_tuple(asio::deferred));
    }

    /// Like wait_any(), for a number of notifiers known at run time (a multi-lock's keys).
    static asio::awaitable<void> wait_any_of(clock::time_point until,
                                             const std::vector<notifier*>& ns) {
        asio::steady_timer timer{co_await asio::this_coro::executor, until};
        std::deque<listener> on_each; // (a deque: listeners stay where they are made)
        for (notifier* n : ns)
            on_each.emplace_back(*n, timer);
        co_await timer.async_wait(asio::as_tuple(asio::deferred));
    }

    void notify_all() {
        // Cancelling only queues the waits' handlers: the list does not change meanwhile.
        for (listener* l = first_; l != nullptr; l = l->next_)
            l->timer_.cancel();
    }

    std::size_t waiting() const noexcept { return count_; }

    /// Registers a timer for the listener's lifetime: notify_all() cancels its wait (for
    /// waits that are not coroutines: see grant_loss_wait.hpp). The listener is its own
    /// list node (it stays where it was made: no copy, no move), so registering allocates
    /// nothing: a watched lock cycle registers four of them.
    class listener {
    public:
        listener(notifier& n, asio::steady_timer& t)
            : owner_(n)
            , timer_(t)
            , prev_(n.last_) {
            // Appended: waiters are woken in the order they came.
            (prev_ != nullptr ? prev_->next_ : n.first_) = this;
            n.last_ = this;
            ++n.count_;
        }
        ~listener() {
            (prev_ != nullptr ? prev_->next_ : owner_.first_) = next_;
            (next_ != nullptr ? next_->prev_ : owner_.last_) = prev_;
            --owner_.count_;
        }
        listener(const listener&) = delete;
        listener& operator=(const listener&) = delete;

    private:
        friend class notifier;
        notifier& owner_;
        asio::steady_timer& timer_;
        listener* prev_;
        listener* next_ = nullptr;
    };

private:
    listener* first_ = nullptr;
    listener* last_ = nullptr;
    std::size_t count_ = 0;
};

} // namespace conclave::detail
