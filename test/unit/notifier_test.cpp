// SPDX-License-Identifier: BSL-1.0
// The notifier: waking, deadlines, cancellation, and wait_any's single timer listening
// to two notifiers. An io_context and timers only: no sockets.
#include "recipes/common/notifier.hpp"
#include "support/catch.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>

#include <array>
#include <optional>

namespace asio = boost::asio;
using conclave::detail::notifier;
using clock_type = notifier::clock;
using namespace std::chrono_literals;

namespace {

// How a waiting coroutine ended.
struct outcome {
    bool returned = false;   ///< the wait returned
    bool threw_next = false; ///< the await after it threw operation_aborted
    std::optional<clock_type::time_point> returned_at;
};

// Waits on a and b (forever unless `until` says otherwise), then awaits once more, as the
// recipes' loops do, to see whether a cancellation surfaces there.
asio::awaitable<void> wait_on_both(notifier& a, notifier& b, clock_type::time_point until,
                                   outcome& out) {
    co_await notifier::wait_any(until, a, b);
    out.returned = true;
    out.returned_at = clock_type::now();
    try {
        co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    } catch (const boost::system::system_error& e) {
        out.threw_next = e.code() == asio::error::operation_aborted;
    }
}

} // namespace

TEST_CASE("wait_any wakes on either notifier and leaves neither registered", "[notifier]") {
    for (int which = 0; which < 2; ++which) {
        asio::io_context ioc;
        notifier a, b;
        outcome out;
        asio::co_spawn(ioc, wait_on_both(a, b, clock_type::time_point::max(), out), asio::detached);
        ioc.poll(); // the coroutine parks
        CHECK_FALSE(out.returned);
        CHECK(a.waiting() == 1);
        CHECK(b.waiting() == 1);
        (which == 0 ? a : b).notify_all();
        ioc.run();
        CHECK(out.returned);
        CHECK_FALSE(out.threw_next);
        CHECK(a.waiting() == 0);
        CHECK(b.waiting() == 0);
    }
}

TEST_CASE("wait_any returns at its deadline when nobody notifies", "[notifier]") {
    asio::io_context ioc;
    notifier a, b;
    outcome out;
    const auto deadline = clock_type::now() + 20ms;
    asio::co_spawn(ioc, wait_on_both(a, b, deadline, out), asio::detached);
    ioc.run();
    REQUIRE(out.returned_at);
    CHECK(*out.returned_at >= deadline);
    CHECK(a.waiting() == 0);
    CHECK(b.waiting() == 0);
}

TEST_CASE("a cancelled wait_any ends, and the next await throws", "[notifier][cancel]") {
    asio::io_context ioc;
    notifier a, b;
    outcome out;
    asio::cancellation_signal cancel;
    asio::co_spawn(ioc, wait_on_both(a, b, clock_type::time_point::max(), out),
                   asio::bind_cancellation_slot(cancel.slot(), asio::detached));
    ioc.poll();
    CHECK(a.waiting() == 1);
    cancel.emit(asio::cancellation_type::terminal);
    ioc.run();
    CHECK(out.returned);
    CHECK(out.threw_next);
    CHECK(a.waiting() == 0);
    CHECK(b.waiting() == 0);
}

TEST_CASE("notify_all wakes every waiter of one notifier", "[notifier]") {
    asio::io_context ioc;
    notifier shared, other_a, other_b;
    outcome first, second;
    asio::co_spawn(ioc, wait_on_both(shared, other_a, clock_type::time_point::max(), first),
                   asio::detached);
    asio::co_spawn(ioc, wait_on_both(other_b, shared, clock_type::time_point::max(), second),
                   asio::detached);
    ioc.poll();
    CHECK(shared.waiting() == 2);
    shared.notify_all();
    ioc.run();
    CHECK(first.returned);
    CHECK(second.returned);
    CHECK(shared.waiting() == 0);
}

TEST_CASE("a listener leaving from the middle, the front or the back unlinks only itself",
          "[notifier]") {
    asio::io_context ioc;
    notifier n;
    // Timers that would wait forever: a notify cancels the registered ones.
    const auto forever = clock_type::time_point::max();
    std::array<asio::steady_timer, 3> timers{asio::steady_timer{ioc, forever},
                                             asio::steady_timer{ioc, forever},
                                             asio::steady_timer{ioc, forever}};
    std::array<int, 3> woken{};
    const auto arm = [&](std::size_t i) {
        timers[i].async_wait([&woken, i](const boost::system::error_code& ec) {
            if (ec == asio::error::operation_aborted)
                ++woken[i];
        });
    };
    for (std::size_t i = 0; i < timers.size(); ++i)
        arm(i);
    std::optional<notifier::listener> front, middle, back;
    front.emplace(n, timers[0]);
    middle.emplace(n, timers[1]);
    back.emplace(n, timers[2]);
    CHECK(n.waiting() == 3);

    middle.reset();
    CHECK(n.waiting() == 2);
    n.notify_all();
    ioc.poll();
    CHECK(woken == std::array<int, 3>{1, 0, 1});

    // The front leaves, then the back: a notify reaches what is left, then nothing.
    arm(0);
    arm(2);
    front.reset();
    CHECK(n.waiting() == 1);
    n.notify_all();
    ioc.poll();
    CHECK(woken == std::array<int, 3>{1, 0, 2});
    back.reset();
    CHECK(n.waiting() == 0);
    n.notify_all();
    ioc.poll();
    CHECK(woken == std::array<int, 3>{1, 0, 2});

    // A listener that comes after the others left is the only one woken.
    middle.emplace(n, timers[1]);
    CHECK(n.waiting() == 1);
    n.notify_all();
    ioc.poll();
    CHECK(woken == std::array<int, 3>{1, 1, 2});
    timers[0].cancel(); // the front's timer, still waiting: lets the io_context finish
    timers[1].cancel();
    ioc.run();
}
