// Wakes coroutines waiting for "something changed" (timers used as a condition variable).
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <list>

namespace conclave::detail {

namespace asio = boost::asio;

class notifier {
public:
    using clock = std::chrono::steady_clock;

    /// Suspends until notify_all() or `until`, whichever comes first, then returns: the
    /// caller re-checks its state. Cancellation of the calling coroutine ends the wait; the
    /// caller's next co_await then throws operation_aborted.
    asio::awaitable<void> wait(clock::time_point until) {
        asio::steady_timer timer{co_await asio::this_coro::executor, until};
        const auto it = waiters_.insert(waiters_.end(), &timer);
        struct unlink {
            std::list<asio::steady_timer*>& list;
            std::list<asio::steady_timer*>::iterator it;
            ~unlink() { list.erase(it); }
        } guard{waiters_, it};
        co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }

    void notify_all() {
        for (auto* t : waiters_)
            t->cancel();
    }

    std::size_t waiting() const noexcept { return waiters_.size(); }

private:
    std::list<asio::steady_timer*> waiters_;
};

} // namespace conclave::detail
