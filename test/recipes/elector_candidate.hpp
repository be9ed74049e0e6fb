// SPDX-License-Identifier: BSL-1.0
// What the elector tests share (elector_*test.cpp): a candidate, an elector with its session
// and its async_run in the background, whose changes a test waits for.
#pragma once

#include "recipes_fixture.hpp"

#include <conclave/elector.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace conclave::test {

// One candidate: an elector, its session, and its async_run in the background.
struct candidate {
    candidate(recipes_fixture& f, std::string value)
        : candidate(f, f.consul, elector_options{}.with_value(std::move(value))) {}
    /// On a client of its own (another process, as far as the lock is concerned).
    candidate(recipes_fixture& f, client& c, elector_options o)
        : fixture(f)
        , consul(c)
        , el(c, f.p + "leader", std::move(o)) {}

    recipes_fixture& fixture;
    client& consul;
    elector el;
    session s;
    asio::cancellation_signal stop;
    std::optional<error_code> ended; ///< how async_run completed
    change_event changed{fixture.ioc.get_executor()};
    asio::cancellation_signal session_stop;
    std::shared_ptr<bool> session_running = std::make_shared<bool>(false);
    int terms = 0; ///< leader tasks started
    int tasks_returned = 0;
    std::vector<fencing_token> tokens;

    // A leader task that leads until cancelled.
    leader_task lead_forever() {
        return [this](leadership l) -> asio::awaitable<void> {
            ++terms;
            tokens.push_back(l.token());
            changed.notify();
            struct on_return {
                candidate& c;
                ~on_return() {
                    ++c.tasks_returned;
                    c.changed.notify();
                }
            } guard{*this};
            asio::steady_timer forever{fixture.ioc, std::chrono::steady_clock::time_point::max()};
            co_await forever.async_wait(asio::use_awaitable);
        };
    }

    asio::awaitable<void> start(leader_task task) {
        s = co_await session::async_create(consul, quick(std::chrono::seconds(2)));
        *session_running = true;
        s.async_run(asio::bind_cancellation_slot(session_stop.slot(), [this](error_code) {
            *session_running = false;
            changed.notify();
        }));
        el.async_run(s, std::move(task),
                     asio::bind_cancellation_slot(stop.slot(), [this](error_code ec) {
                         ended = ec;
                         changed.notify();
                     }));
    }

    asio::awaitable<void> wait_until(std::function<bool()> cond) {
        while (!cond())
            co_await changed.wait();
    }

    asio::awaitable<void> finish() {
        if (!ended) {
            stop.emit(asio::cancellation_type::terminal);
            co_await wait_until([this] { return ended.has_value(); });
        }
        if (*session_running) { // (not on a signal whose operation has completed)
            session_stop.emit(asio::cancellation_type::terminal);
            // The signal must outlive the operation bound to it.
            co_await wait_until([this] { return !*session_running; });
        }
        co_await s.async_destroy();
    }
};

} // namespace conclave::test
