// SPDX-License-Identifier: BSL-1.0
// What the recipes report to their client's logger and observer: each event in one place,
// its log line and its observer call together.
#pragma once

#include "observe/log_line.hpp"

#include <conclave/client.hpp>
#include <conclave/observer.hpp>

#include <chrono>
#include <string_view>
#include <utility>

namespace conclave::detail {

// Each report catches what the logger's sink or the observer throws: reports are made on
// the library's own paths, some of them noexcept (health(), destructors).

const logger& log_of(const client& c) noexcept;
/// The client's observer, or null.
observer* observer_of(const client& c) noexcept;

/// A session or grant is now `h` (jeopardy: warning; lost: error; held again: info).
void report_health(const client& c, hold_kind kind, std::string_view name, hold_health h,
                   const error_code& reason) noexcept;

/// A renewal of `session` ended with `ec` after `took` (a failure: warning).
void report_renewal(const client& c, std::string_view session, const error_code& ec,
                    std::chrono::nanoseconds took) noexcept;

/// A pass of `session`'s health check `check` ended with `ec` after `took` (a failure:
/// warning).
void report_check_pass(const client& c, std::string_view session, std::string_view check,
                       const error_code& ec, std::chrono::nanoseconds took) noexcept;

/// An acquire ended (granted: info; failed: warning; timed out, cancelled: debug).
void report_acquire(const client& c, const acquire_event& e) noexcept;

/// A leadership began or ended (info).
void report_leadership(const client& c, const leadership_event& e) noexcept;

/// Reports an acquire exactly once: by finish(), or, when the acquire ends by an exception
/// (or its coroutine is destroyed), as failed from the destructor.
class acquire_report {
public:
    acquire_report(client c, grant_kind kind, std::string_view key)
        : client_(std::move(c))
        , kind_(kind)
        , key_(key) {}
    acquire_report(const acquire_report&) = delete;
    acquire_report& operator=(const acquire_report&) = delete;
    ~acquire_report() {
        if (!done_)
            finish(acquire_outcome::failed, {});
    }
    void finish(acquire_outcome outcome, const error_code& ec) {
        done_ = true;
        report_acquire(client_, acquire_event{kind_, key_, outcome, ec,
                                              std::chrono::steady_clock::now() - started_});
    }

private:
    client client_;
    grant_kind kind_;
    std::string_view key_; // (the lock's or semaphore's state, which the acquire holds)
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    bool done_ = false;
};

/// Reports a term of leadership: began() now, ended(cause) once, or "stopped" from the
/// destructor when the run ends by an exception.
class term_report {
public:
    term_report(client c, std::string_view key)
        : client_(std::move(c))
        , key_(key) {}
    term_report(const term_report&) = delete;
    term_report& operator=(const term_report&) = delete;
    ~term_report() {
        if (leading_)
            ended("stopped");
    }
    void began() {
        leading_ = true;
        report_leadership(client_, leadership_event{key_, true, {}});
    }
    void ended(std::string_view cause) {
        leading_ = false;
        report_leadership(client_, leadership_event{key_, false, cause});
    }

private:
    client client_;
    std::string_view key_;
    bool leading_ = false;
};

} // namespace conclave::detail
