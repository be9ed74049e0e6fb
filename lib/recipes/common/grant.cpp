// SPDX-License-Identifier: BSL-1.0
// conclave::grant: what lock leases, permits and leadership share, on detail::grant_state.
#include "consul/spawn.hpp"
#include "recipes/common/grant.hpp"
#include "recipes/common/health_wait.hpp"

#include <boost/asio/append.hpp>
#include <boost/asio/dispatch.hpp>

namespace conclave {

using clock = std::chrono::steady_clock;

namespace {

// An operation on an empty grant (a default-constructed lease, permit or leadership)
// completes with invalid_argument, as any refused operation does, rather than throwing
// from its initiation (which a use_awaitable caller could not catch around its co_await).
template <class Handler, class... Values>
void refuse_empty(Handler h, Values... values) {
    asio::dispatch(asio::append(std::move(h), make_error_code(errc::invalid_argument), values...));
}

} // namespace

void detail::refuse_empty_grant(asio::any_completion_handler<void(error_code, txn_result)> h) {
    refuse_empty(std::move(h), txn_result{});
}

void detail::refuse_empty_grant(asio::any_completion_handler<void(error_code, bool)> h) {
    refuse_empty(std::move(h), false);
}

void detail::refuse_empty_grant(asio::any_completion_handler<void(error_code)> h) {
    refuse_empty(std::move(h));
}

const fencing_token& grant::token() const noexcept {
    return state_->token;
}

std::optional<fencing_token> grant::held() const {
    return state_ ? state_->held() : std::nullopt;
}

hold_health grant::health() const {
    return state_ ? state_->health(clock::now()) : hold_health::lost;
}

clock::duration grant::remaining() const {
    return state_ ? state_->remaining(clock::now()) : clock::duration::zero();
}

void grant::wait_lost_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h) {
    if (!s)
        return refuse_empty(std::move(h));
    auto& g = *s;
    g.start_wait_lost(std::move(s), std::move(h));
}

unsigned grant::hold_count() const noexcept {
    return state_ ? state_->holds : 0;
}

void grant::release_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h) {
    if (!s)
        return refuse_empty(std::move(h));
    auto& g = *s;
    if (g.session->handed_over) {
        // The successor holds it now: nothing to write, nothing to hand to a local waiter.
        g.holds = 0;
        g.mark_released();
        return asio::dispatch(asio::append(std::move(h), error_code{}));
    }
    if (g.holds > 1) { // a re-entrant hold: the grant stays for the others
        --g.holds;
        return asio::dispatch(asio::append(std::move(h), error_code{}));
    }
    g.holds = 0; // no re-entrant acquire joins a grant being released
    g.start_release(std::move(s), std::move(h));
}

void grant::wait_health_change_impl(state_ptr s, hold_health seen,
                                    asio::any_completion_handler<void(error_code, hold_health)> h) {
    if (!s)
        return refuse_empty(std::move(h), hold_health::lost);
    auto ex = s->executor();
    auto session = s->session;
    detail::spawn_op(ex, detail::wait_health_change(std::move(session), std::move(s), seen),
                     std::move(h));
}

} // namespace conclave
