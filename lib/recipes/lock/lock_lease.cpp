// SPDX-License-Identifier: BSL-1.0
// lock_lease: the lost signal (key watch, session loss, local deadline), release and
// guarded writes.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/spawn.hpp"
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
    auto [ec, t] =
        co_await detail::call(L->recipe->consul, detail::endpoint::txn{std::move(ops), {}});
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

} // namespace

void detail::lease_state::start_wait_lost(std::shared_ptr<grant_state> self,
                                          asio::any_completion_handler<void(error_code)> h) {
    // Held while the key names our session (not deleted, released or taken over).
    auto still_held = [&H = *recipe->hub, session = token.session] {
        return H.entry() && H.entry()->session == session;
    };
    watch_for_loss(*this, std::move(self), still_held, std::move(h));
}

void detail::lease_state::start_release(std::shared_ptr<grant_state> self,
                                        asio::any_completion_handler<void(error_code)> h) {
    spawn_op(executor(), release_lease(std::static_pointer_cast<lease_state>(std::move(self))),
             std::move(h));
}

void lock_lease::guarded_txn_impl(state_ptr s, std::vector<txn_op> ops,
                                  asio::any_completion_handler<void(error_code, txn_result)> h) {
    detail::run_grant_op<detail::lease_state>(std::move(s), std::move(h), [&](auto L) {
        return guarded_txn(std::move(L), std::move(ops));
    });
}

} // namespace conclave
