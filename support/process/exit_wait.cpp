// SPDX-License-Identifier: BSL-1.0
#include "process/exit_wait.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <poll.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace conclave::programs {

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// Without a pidfd (Linux before 5.3, or a seccomp filter), how often exited() is polled.
constexpr auto poll_interval = 20ms;

// A descriptor that becomes readable when the process exits; -1 when there is none.
int open_pidfd(pid_t pid) {
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

} // namespace

asio::awaitable<boost::system::error_code> async_wait_exit(const child_process& child) {
    const auto ex = co_await asio::this_coro::executor;
    for (;;) {
        if (child.exited())
            co_return boost::system::error_code{};
        // A fresh pidfd per wait, registered right before waiting: Asio's epoll
        // registration is edge-triggered, and epoll reports a descriptor that is already
        // readable when it is added, so an exit is never missed.
        if (const int fd = open_pidfd(child.pid()); fd >= 0) {
            asio::posix::stream_descriptor d(ex, fd);
            auto [ec] = co_await d.async_wait(asio::posix::descriptor_base::wait_read,
                                              asio::as_tuple(asio::use_awaitable));
            if (ec)
                co_return ec;
        } else {
            asio::steady_timer t(ex, poll_interval);
            auto [ec] = co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
            if (ec)
                co_return ec;
        }
    }
}

bool wait_exit_for(const child_process& child, std::chrono::milliseconds limit) {
    if (child.exited())
        return true;
    if (const int fd = open_pidfd(child.pid()); fd >= 0) {
        pollfd p{fd, POLLIN, 0};
        ::poll(&p, 1, static_cast<int>(limit.count()));
        ::close(fd);
        return child.exited();
    }
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!child.exited()) {
        if (std::chrono::steady_clock::now() >= end)
            return false;
        std::this_thread::sleep_for(poll_interval);
    }
    return true;
}

} // namespace conclave::programs
