// SPDX-License-Identifier: BSL-1.0
// async_wait_lost of a grant (lock lease, semaphore permit): a plain asynchronous operation,
// one object and one timer, no coroutine.
//
// Why not a coroutine: a watched lock cycle sets this wait up and cancels it every time
// (`wait_lost() || work()`, then release). As a co_spawned coroutine it cost a coroutine
// frame, the spawn's entry dispatch and work guards and a type-erased completion, every
// cycle, for a wait that almost never completes.
#pragma once

#include "consul/spawn.hpp"
#include "recipes/common/grant.hpp"
#include "recipes/common/notifier.hpp"
#include "recipes/common/shared_query.hpp"

#include <conclave/error.hpp>

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>

namespace conclave::detail {

/// Waits until the grant is lost: `still_held()` (asked of the hub's state whenever it is
/// known) says no, the hub's query failed more than `retries` times in a row, the session is
/// lost (invalidated or past its local deadline), or the grant was marked lost (released by
/// us). Completes with the first reason, or with operation_aborted when a terminal
/// cancellation came first (a value: this wait is usually ended that way). The grant keeps
/// the hub alive (`hub` belongs to the lock or semaphore it holds).
template <class StillHeld>
class grant_loss_wait : public std::enable_shared_from_this<grant_loss_wait<StillHeld>> {
public:
    using clock = std::chrono::steady_clock;
    using handler_type = asio::any_completion_handler<void(error_code)>;

    static void start(asio::any_io_executor ex, std::shared_ptr<grant_state> g, shared_query& hub,
                      unsigned retries, StillHeld still_held, handler_type handler) {
        auto op = std::make_shared<grant_loss_wait>(std::move(ex), std::move(g), hub, retries,
                                                    std::move(still_held), std::move(handler));
        op->begin();
    }

    grant_loss_wait(asio::any_io_executor ex, std::shared_ptr<grant_state> g, shared_query& hub,
                    unsigned retries, StillHeld still_held, handler_type handler)
        : timer_(ex)
        , grant_(std::move(g))
        , hub_(hub)
        , retries_(retries)
        , still_held_(std::move(still_held))
        , handler_(std::move(handler))
        , work_(asio::prefer(asio::get_associated_executor(handler_, ex),
                             asio::execution::outstanding_work.tracked))
        , subscribe_at_(clock::now() + monitor_start_delay)
        , on_hub_(hub.changed, timer_)
        , on_session_(grant_->session->changed, timer_)
        , on_grant_(grant_->changed, timer_) {}

private:
    // Cancels the wait on a terminal cancellation (the filter a co_spawned coroutine has),
    // on the operation's executor: a signal may be emitted from another thread.
    struct cancel_request {
        std::weak_ptr<grant_loss_wait> op;
        void operator()(asio::cancellation_type type) {
            if ((type & asio::cancellation_type::terminal) == asio::cancellation_type::none)
                return;
            if (auto o = op.lock()) {
                auto ex = o->timer_.get_executor();
                asio::dispatch(ex, [o = std::move(o)] {
                    o->cancelled_ = true;
                    o->timer_.cancel();
                });
            }
        }
    };

    void begin() {
        auto slot = asio::get_associated_cancellation_slot(handler_);
        if (slot.is_connected())
            slot.template emplace<cancel_request>(cancel_request{this->weak_from_this()});
        step(true);
    }

    // One look at the grant: complete, or wait for the next change (any of the three
    // notifiers cancels the timer's wait) or the session's local deadline.
    // An exception (an allocation, the semaphore's record decoding in still_held) ends the
    // wait with its error code, as the coroutine's spawn did.
    void step(bool initiating) {
        error_code ec;
        try {
            ec = look();
            if (!ec) {
                auto until = grant_->session->policy.deadline();
                if (!subscription_) {
                    if (clock::now() >= subscribe_at_)
                        subscription_ = hub_.subscribe();
                    else
                        until = std::min(until, subscribe_at_);
                }
                timer_.expires_at(until);
                timer_.async_wait(
                    [self = this->shared_from_this()](const error_code&) { self->step(false); });
                return;
            }
        } catch (...) {
            ec = error_from_exception(std::current_exception());
        }
        finish(ec, initiating);
    }

    // The reason the wait ends now, if any.
    error_code look() {
        grant_state& g = *grant_;
        if (g.lost)
            return g.lost;
        if (cancelled_)
            return asio::error::operation_aborted;
        if (g.session->check(clock::now())) {
            g.mark_lost(g.session->lost);
            // Consul no longer knows the session (restarted with empty state, or it was
            // destroyed): what the hub knows of its keys is out of date, and a read blocked
            // at an index from before a restart would wait its whole wait. Read afresh, for
            // whoever waits on these keys in this process.
            if (g.lost == errc::session_invalidated)
                hub_.forget();
            return g.lost;
        }
        if (hub_.failures() > retries_ || (hub_.known() && !still_held_())) {
            g.mark_lost(make_error_code(errc::lock_lost));
            return g.lost;
        }
        return {};
    }

    void finish(error_code ec, bool initiating) {
        subscription_.reset();
        auto slot = asio::get_associated_cancellation_slot(handler_);
        if (slot.is_connected())
            slot.clear();
        auto work = std::move(work_);
        // Never from inside the initiating call (Asio's rule): posted then. Either way through
        // the operation's executor, on to the handler's own if it has one.
        if (initiating)
            asio::post(timer_.get_executor(), asio::append(std::move(handler_), ec));
        else
            asio::dispatch(timer_.get_executor(), asio::append(std::move(handler_), ec));
    }

    asio::steady_timer timer_;
    std::shared_ptr<grant_state> grant_;
    shared_query& hub_;
    const unsigned retries_;
    StillHeld still_held_;
    handler_type handler_;
    asio::any_completion_executor work_; ///< the handler's executor, kept busy meanwhile
    const clock::time_point subscribe_at_;
    std::shared_ptr<void> subscription_;
    bool cancelled_ = false;
    const notifier::listener on_hub_, on_session_, on_grant_;
};

/// Starts a grant_loss_wait (the type of `still_held` deduced).
template <class StillHeld>
void start_grant_loss_wait(asio::any_io_executor ex, std::shared_ptr<grant_state> g,
                           shared_query& hub, unsigned retries, StillHeld still_held,
                           asio::any_completion_handler<void(error_code)> handler) {
    grant_loss_wait<StillHeld>::start(std::move(ex), std::move(g), hub, retries,
                                      std::move(still_held), std::move(handler));
}

/// start_grant_loss_wait for the grant `g` of a recipe object whose state has one hub (a
/// lock's, a semaphore's, a read-write lock's): on its executor, through that hub's query,
/// with its options' monitor_retries. `self` owns `g`.
template <class Recipe, class StillHeld>
void watch_for_loss(grant_of<Recipe>& g, std::shared_ptr<grant_state> self, StillHeld still_held,
                    asio::any_completion_handler<void(error_code)> handler) {
    start_grant_loss_wait(g.executor(), std::move(self), *g.recipe->hub,
                          g.recipe->opts.monitor_retries, std::move(still_held),
                          std::move(handler));
}

} // namespace conclave::detail
