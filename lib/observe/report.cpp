// SPDX-License-Identifier: BSL-1.0
#include "observe/report.hpp"

namespace conclave::detail {

// Through the client's public config(): the observe layer does not reach into the client's
// state (lib/consul), which reports through it.
const logger& log_of(const client& c) noexcept {
    return c.config().log;
}

observer* observer_of(const client& c) noexcept {
    return c.config().observer.get();
}

void report_health(const client& c, hold_kind kind, std::string_view name, hold_health h,
                   const error_code& reason) noexcept try {
    const logger& log = log_of(c);
    switch (h) {
    case hold_health::jeopardy:
        log_line(log, log_level::warning, to_string(kind), " ", name, " in jeopardy: ", reason);
        break;
    case hold_health::lost:
        log_line(log, log_level::error, to_string(kind), " ", name, " lost: ", reason);
        break;
    case hold_health::held:
        log_line(log, log_level::info, to_string(kind), " ", name, " held again");
        break;
    }
    if (auto* o = observer_of(c))
        o->health_changed(health_event{kind, name, h, reason});
} catch (...) {
}

void report_renewal(const client& c, std::string_view session, const error_code& ec,
                    std::chrono::nanoseconds took) noexcept try {
    if (ec)
        log_line(log_of(c), log_level::warning, "renewal of session ", session, " failed after ",
                 took, ": ", ec);
    if (auto* o = observer_of(c))
        o->session_renewed(renew_event{session, ec, took});
} catch (...) {
}

void report_check_pass(const client& c, std::string_view session, std::string_view check,
                       const error_code& ec, std::chrono::nanoseconds took) noexcept try {
    if (ec)
        log_line(log_of(c), log_level::warning, "pass of health check ", check, " of session ",
                 session, " failed after ", took, ": ", ec);
    if (auto* o = observer_of(c))
        o->check_passed(check_pass_event{session, check, ec, took});
} catch (...) {
}

void report_acquire(const client& c, const acquire_event& e) noexcept try {
    const logger& log = log_of(c);
    switch (e.outcome) {
    case acquire_outcome::taken:
    case acquire_outcome::handed_over:
    case acquire_outcome::already_held:
        log_line(log, log_level::info, to_string(e.kind), " ", e.key, " acquired (",
                 to_string(e.outcome), ") after ", e.waited);
        break;
    case acquire_outcome::failed:
        log_line(log, log_level::warning, to_string(e.kind), " ", e.key,
                 " not acquired: ", e.error);
        break;
    case acquire_outcome::timed_out:
    case acquire_outcome::cancelled:
        log_line(log, log_level::debug, to_string(e.kind), " ", e.key, " not acquired (",
                 to_string(e.outcome), ") after ", e.waited);
        break;
    }
    if (auto* o = observer_of(c))
        o->acquire_finished(e);
} catch (...) {
}

void report_leadership(const client& c, const leadership_event& e) noexcept try {
    if (e.leading)
        log_line(log_of(c), log_level::info, "leading ", e.key);
    else
        log_line(log_of(c), log_level::info, "no longer leading ", e.key, " (", e.cause, ")");
    if (auto* o = observer_of(c))
        o->leadership_changed(e);
} catch (...) {
}

} // namespace conclave::detail
