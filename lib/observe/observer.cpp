// SPDX-License-Identifier: BSL-1.0
#include <conclave/observer.hpp>

namespace conclave {

observer::~observer() = default;
void observer::request_started(std::string_view, bool) {}
void observer::request_finished(const request_event&) {}
void observer::connection_opened() {}
void observer::connection_closed() {}
void observer::session_renewed(const renew_event&) {}
void observer::check_passed(const check_pass_event&) {}
void observer::health_changed(const health_event&) {}
void observer::acquire_finished(const acquire_event&) {}
void observer::leadership_changed(const leadership_event&) {}

std::string_view to_string(grant_kind k) noexcept {
    switch (k) {
    case grant_kind::lock:
        return "lock";
    case grant_kind::semaphore:
        return "semaphore";
    case grant_kind::multi_lock:
        return "multi_lock";
    case grant_kind::read_write_lock:
        break;
    }
    return "read_write_lock";
}

std::string_view to_string(hold_kind k) noexcept {
    switch (k) {
    case hold_kind::session:
        return "session";
    case hold_kind::lock:
        return "lock";
    case hold_kind::semaphore:
        return "semaphore";
    case hold_kind::multi_lock:
        return "multi_lock";
    case hold_kind::group_member:
        return "group_member";
    case hold_kind::read_write_lock:
        break;
    }
    return "read_write_lock";
}

std::string_view to_string(acquire_outcome o) noexcept {
    switch (o) {
    case acquire_outcome::taken:
        return "taken";
    case acquire_outcome::handed_over:
        return "handed_over";
    case acquire_outcome::already_held:
        return "already_held";
    case acquire_outcome::timed_out:
        return "timed_out";
    case acquire_outcome::cancelled:
        return "cancelled";
    case acquire_outcome::failed:
        break;
    }
    return "failed";
}

} // namespace conclave
