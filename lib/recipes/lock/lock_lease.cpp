// SPDX-License-Identifier: BSL-1.0
// lock_lease: the lost signal (key watch, session loss, local deadline) and release.
#include "consul/spawn.hpp"
#include "consul/txn_call.hpp"
#include "recipes/common/grant_loss_wait.hpp"
#include "recipes/common/health_wait.hpp"
#include "recipes/lock/lock_release.hpp"
#include "recipes/lock/lock_state.hpp"

#include <algorithm>

namespace conclave {

using clock = std::chrono::steady_clock;
using detail::lease_state;
using detail::session_state;

namespace {

asio::awaitable<std::pair<error_code, txn_result>> guarded_txn(std::shared_ptr<lease_state> L,
                                                               std::vector<txn_op> ops) {
    using result = std::pair<error_code, txn_result>;
    if (L->lost || L->released)
        co_return result{make_error_code(errc::lock_lost), txn_result{}};
    ops.insert(ops.begin(), txn_op::check_session(L->token.key, L->token.session));
    auto [ec, t] = co_await detail::txn_call(L->lock->consul, std::move(ops));
    if (ec)
        co_return result{ec, txn_result{}};
    if (!t.committed) {
        const bool guard_failed = std::any_of(t.errors.begin(), t.errors.end(),
                                              [](const txn_error& e) { return e.op_index == 0; });
        if (guard_failed) {
            L->mark_lost(make_error_code(errc::lock_lost));
            co_return result{make_error_code(errc::lock_lost), std::move(t)};
        }
        for (auto& e : t.errors)
            --e.op_index; // report positions in the caller's ops
    } else if (!t.results.empty()) {
        t.results.erase(t.results.begin()); // the check's own entry
    }
    co_return result{error_code{}, std::move(t)};
}

const std::shared_ptr<lease_state>& require(const std::shared_ptr<lease_state>& s) {
    if (!s)
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "operation on an empty conclave::lock_lease");
    return s;
}

} // namespace

const fencing_token& lock_lease::token() const noexcept {
    return state_->token;
}

std::optional<fencing_token> lock_lease::held() const {
    return state_ ? state_->held() : std::nullopt;
}

hold_health lock_lease::health() const {
    return state_ ? state_->health(clock::now()) : hold_health::lost;
}

clock::duration lock_lease::remaining() const {
    return state_ ? state_->remaining(clock::now()) : clock::duration::zero();
}

void lock_lease::wait_health_change_impl(
    state_ptr s, hold_health seen, asio::any_completion_handler<void(error_code, hold_health)> h) {
    auto ex = require(s)->lock->consul.get_executor();
    auto session = s->session;
    detail::spawn_op(ex, detail::wait_health_change(std::move(session), std::move(s), seen),
                     std::move(h));
}

void lock_lease::wait_lost_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h) {
    auto ex = require(s)->lock->consul.get_executor();
    auto& hub = *s->lock->hub;
    // Held while the key names our session (not deleted, released or taken over).
    auto still_held = [&hub, session = s->token.session] {
        return hub.entry() && hub.entry()->session == session;
    };
    const auto retries = s->lock->opts.monitor_retries;
    detail::start_grant_loss_wait(ex, std::move(s), hub, retries, still_held, std::move(h));
}

void lock_lease::guarded_txn_impl(state_ptr s, std::vector<txn_op> ops,
                                  asio::any_completion_handler<void(error_code, txn_result)> h) {
    auto ex = require(s)->lock->consul.get_executor();
    detail::spawn_op(ex, guarded_txn(std::move(s), std::move(ops)), std::move(h));
}

void lock_lease::release_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h) {
    auto ex = require(s)->lock->consul.get_executor();
    detail::spawn_op(ex, detail::release_lease(std::move(s)), std::move(h));
}

} // namespace conclave
