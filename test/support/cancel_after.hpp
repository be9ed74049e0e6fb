// SPDX-License-Identifier: BSL-1.0
// A cancellation signal that a timer emits after a delay, safe to outlive the operation.
#pragma once

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <memory>

namespace conclave::test {

/// Emits `type` on its signal `delay` after construction, unless it was disarmed or
/// destroyed first. Why not a plain signal + timer lambda: when the operation completes
/// at the same moment the timer fires, the timer's handler is already queued and would
/// emit on a signal whose scope has ended (ASan: heap-use-after-free). Here the handler
/// only touches shared state and emits only while armed.
class cancel_after {
public:
    template <class Executor>
    cancel_after(const Executor& ex, std::chrono::steady_clock::duration delay,
                 boost::asio::cancellation_type type = boost::asio::cancellation_type::terminal)
        : state_{std::make_shared<state>(ex)} {
        state_->timer.expires_after(delay);
        state_->timer.async_wait([s = state_, type](boost::system::error_code ec) {
            if (!ec && s->armed)
                s->signal.emit(type);
        });
    }
    cancel_after(const cancel_after&) = delete;
    cancel_after& operator=(const cancel_after&) = delete;
    ~cancel_after() { disarm(); }

    /// Binds the signal's slot to `token`.
    template <class Token>
    auto bind(Token token) {
        return boost::asio::bind_cancellation_slot(state_->signal.slot(), std::move(token));
    }

    /// Call once the operation has completed: a timer that fires later emits nothing.
    void disarm() {
        state_->armed = false;
        state_->timer.cancel();
    }

private:
    struct state {
        template <class Executor>
        explicit state(const Executor& ex)
            : timer{ex} {}
        boost::asio::steady_timer timer;
        boost::asio::cancellation_signal signal;
        bool armed = true;
    };
    std::shared_ptr<state> state_;
};

} // namespace conclave::test
