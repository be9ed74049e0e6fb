// SPDX-License-Identifier: BSL-1.0
// When to renew a session, and when it counts as lost: pure decisions, no I/O, no clock.
#pragma once

#include <algorithm>
#include <chrono>

namespace conclave::detail {

/// The renew schedule of one session (sans-I/O: the caller passes `now`).
///
/// Consul keeps a session at least TTL after it processed a renew (in practice 2 x TTL),
/// and the renew reached Consul after we sent it. So `start of the last successful renew +
/// TTL` is a moment before which Consul cannot have expired the session: the local
/// deadline. A holder that treats itself as lost at that deadline gives up before anyone
/// else can acquire what it held.
class renew_policy {
public:
    using clock = std::chrono::steady_clock;
    using duration = clock::duration;

    renew_policy(duration ttl, clock::time_point created_at) noexcept
        : ttl_(ttl)
        , last_success_start_(created_at)
        , next_(created_at + ttl / 2) {}

    duration ttl() const noexcept { return ttl_; }
    /// The earlier of the renewals' deadline and, for a session bound to a TTL check this
    /// process passes (bind_check), the check's: the agent marks the check critical, and
    /// Consul invalidates the session, no sooner than its TTL after the last pass reached it.
    clock::time_point deadline() const noexcept {
        const auto renewed = renew_deadline();
        return check_ttl_ > duration::zero() ? std::min(renewed, check_deadline()) : renewed;
    }
    /// When the next renew should start.
    clock::time_point next_renew() const noexcept { return next_; }
    bool expired(clock::time_point now) const noexcept { return now >= deadline(); }
    unsigned consecutive_failures() const noexcept { return failures_; }

    /// When a session with no successful renew since counts as in jeopardy: 3/8 of the TTL
    /// before the deadline. The renew is due with half the TTL left and takes one round
    /// trip: one not answered by then (ttl/8 later) is late, whatever the request timeout.
    /// For the check, the same share of its TTL (a pass is due with two thirds left).
    clock::time_point jeopardy_at() const noexcept {
        const auto renewed = renew_deadline() - ttl_ * 3 / 8;
        if (check_ttl_ <= duration::zero())
            return renewed;
        return std::min(renewed, check_deadline() - check_ttl_ * 3 / 8);
    }
    /// Renewals failing (one failed since the last success) or late: the session is still
    /// held until the deadline, but may be lost then.
    bool in_jeopardy(clock::time_point now) const noexcept {
        return failures_ > 0 || check_failures_ > 0 || now >= jeopardy_at();
    }

    /// Binds the deadline to a TTL check of `check_ttl`, passed (or registered passing) by a
    /// request that started at `passed_at`.
    void bind_check(duration check_ttl, clock::time_point passed_at) noexcept {
        check_ttl_ = check_ttl;
        check_passed_ = passed_at;
        check_failures_ = 0;
    }
    /// A pass that started at `start` succeeded.
    void on_check_passed(clock::time_point start) noexcept {
        check_passed_ = std::max(check_passed_, start);
        check_failures_ = 0;
    }
    /// A pass failed: in jeopardy until one succeeds.
    void on_check_failure() noexcept { ++check_failures_; }
    /// When the next pass should start: a third of the check's TTL after the last good one,
    /// or, after failures, an eighth of it after `now`.
    clock::time_point next_pass(clock::time_point now) const noexcept {
        if (check_failures_ > 0)
            return now + check_ttl_ / 8;
        return check_passed_ + check_ttl_ / 3;
    }

    /// A renew that started at `start` succeeded and Consul reported `server_ttl`. A larger
    /// TTL is adopted (Consul may ask for one under load); a smaller one is ignored, since
    /// Consul never expires a session before the TTL it was created with.
    void on_success(clock::time_point start, duration server_ttl) noexcept {
        if (server_ttl > ttl_)
            ttl_ = server_ttl;
        last_success_start_ = std::max(last_success_start_, start);
        failures_ = 0;
        next_ = last_success_start_ + ttl_ / 2;
    }

    /// A renew failed with a transient error at `now`: retry after a backoff that doubles
    /// from ttl/16 up to ttl/4, moved earlier if that lets one more try start before the
    /// last useful moment (deadline - ttl/8). Never sooner than the backoff once that moment
    /// has passed: a failing Consul is not hammered in a loop until the deadline.
    void on_transient_failure(clock::time_point now) noexcept {
        ++failures_;
        duration backoff = ttl_ / 16;
        for (unsigned i = 1; i < failures_ && backoff < ttl_ / 4; ++i)
            backoff *= 2;
        backoff = std::min(backoff, ttl_ / 4);
        const auto last_useful = renew_deadline() - ttl_ / 8;
        next_ = now + backoff;
        if (now < last_useful && next_ > last_useful)
            next_ = last_useful;
    }

    /// How long one renew request may take: never past the deadline.
    duration request_budget(clock::time_point now, duration request_timeout) const noexcept {
        const auto left = deadline() - now;
        return std::max(duration::zero(), std::min(left, request_timeout));
    }

private:
    clock::time_point renew_deadline() const noexcept { return last_success_start_ + ttl_; }
    clock::time_point check_deadline() const noexcept { return check_passed_ + check_ttl_; }

    duration ttl_;
    duration check_ttl_{0};
    clock::time_point check_passed_{};
    unsigned check_failures_ = 0;
    clock::time_point last_success_start_;
    clock::time_point next_;
    unsigned failures_ = 0;
};

} // namespace conclave::detail
