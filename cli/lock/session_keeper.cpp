// SPDX-License-Identifier: BSL-1.0
#include "cli/lock/session_keeper.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave::cli {

namespace asio = boost::asio;

// Shared with the renew loop's completion handler, which may run after the keeper is gone.
struct session_keeper::state {
    explicit state(const asio::any_io_executor& ex)
        : finished_event(ex, asio::steady_timer::time_point::max()) {}
    asio::steady_timer finished_event; // cancelled when the loop ends (a condition variable)
    asio::cancellation_signal cancel;
    bool finished = false;
};

session_keeper::session_keeper(session s)
    : session_(std::move(s))
    , state_(std::make_shared<state>(session_.get_client().get_executor())) {
    auto on_end = [st = state_](error_code) {
        st->finished = true;
        st->finished_event.cancel();
    };
    session_.async_run(asio::bind_cancellation_slot(state_->cancel.slot(), std::move(on_end)));
}

asio::awaitable<error_code> session_keeper::stop() {
    auto [ec] = co_await session_.async_destroy(asio::as_tuple(asio::use_awaitable));
    // A destroyed session ends its loop by itself; otherwise cancel it.
    if (ec && !state_->finished)
        state_->cancel.emit(asio::cancellation_type::terminal);
    while (!state_->finished)
        co_await state_->finished_event.async_wait(asio::as_tuple(asio::use_awaitable));
    co_return ec;
}

} // namespace conclave::cli
