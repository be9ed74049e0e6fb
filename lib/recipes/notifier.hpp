// Wakes coroutines waiting for "something changed" (timers used as a condition variable).
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <array>
#include <chrono>
#include <list>

namespace conclave::detail {

namespace asio = boost::asio;

class notifier {
public:
    using clock = std::chrono::steady_clock;

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

    void notify_all() {
        for (auto* t : waiters_)
            t->cancel();
    }

    std::size_t waiting() const noexcept { return waiters_.size(); }

    /// Registers a timer for the listener's lifetime: notify_all() cancels its wait (for
    /// waits that are not coroutines: see grant_loss_wait.hpp).
    class listener {
    public:
        listener(notifier& n, asio::steady_timer& t)
            : list_(n.waiters_)
            , it_(list_.insert(list_.end(), &t)) {}
        ~listener() { list_.erase(it_); }
        listener(const listener&) = delete;
        listener& operator=(const listener&) = delete;

    private:
        std::list<asio::steady_timer*>& list_;
        std::list<asio::steady_timer*>::iterator it_;
    };

private:
    std::list<asio::steady_timer*> waiters_;
};

} // namespace conclave::detail
