// SPDX-License-Identifier: BSL-1.0
// multi_lock_lease: the lost signal (every key still names our session, the session alive),
// the release of all keys in one transaction, and guarded writes.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/spawn.hpp"
#include "recipes/lock/lock_release.hpp"
#include "recipes/multi_lock/multi_lock_ops.hpp"
#include "recipes/multi_lock/multi_lock_release.hpp"
#include "recipes/multi_lock/multi_lock_state.hpp"

#include <algorithm>

namespace conclave {

using clock = std::chrono::steady_clock;
using detail::multi_lease_state;
using detail::multi_lock_state;

namespace detail {

asio::awaitable<std::pair<error_code, bool>> release_keys(multi_lock_state& m,
                                                          const std::string& session,
                                                          const grant_state* self,
                                                          clock::time_point until) {
    std::vector<txn_op> ops = release_ops(m, session, self);
    const bool all = ops.size() == m.hubs.size();
    if (ops.empty())
        co_return std::pair{error_code{}, false};
    auto [ec, t] = co_await call(m.consul, endpoint::txn{std::move(ops), {}}, until);
    if (ec) {
        m.forget_all(); // the keys may have changed hands: everyone reads them again
        co_return std::pair{ec, false};
    }
    if (t.committed) {
        for (const auto& e : t.results) {
            const auto at = std::lower_bound(m.keys.begin(), m.keys.end(), e.key);
            if (at != m.keys.end() && *at == e.key)
                m.hubs[at - m.keys.begin()]->saw_write(e);
        }
        m.poke_all();
        co_return std::pair{error_code{}, all};
    }
    // Some key no longer names the session (Consul refuses the whole transaction): release
    // the others one by one (an unlock of a key we do not hold is refused, harmlessly), all
    // within `until`.
    for (auto& hub : m.hubs) {
        if (clock::now() >= until)
            break;
        if (hub->known() && hub->entry() && hub->entry()->session == session &&
            !held_by_another_grant(*hub, self))
            co_await release_for(
                hub, session, m.opts.value,
                std::chrono::ceil<std::chrono::milliseconds>(until - clock::now()));
    }
    m.forget_all();
    co_return std::pair{error_code{}, false};
}

} // namespace detail

namespace {

asio::awaitable<error_code> release_grant(std::shared_ptr<multi_lease_state> L) {
    if (L->released)
        co_return error_code{};
    auto& m = *L->recipe;
    auto [ec, together] = co_await detail::release_keys(
        m, L->token.session, L.get(), clock::now() + m.consul.config().request_timeout);
    if (ec)
        co_return ec; // unknown outcome: still counts as held, the caller may retry
    if (!together)    // a key had changed hands before this release: it was lost (reported so)
        L->mark_lost(make_error_code(errc::lock_lost));
    L->mark_released();
    L->mark_lost(make_error_code(errc::lock_lost)); // wakes the waits for the loss
    co_return error_code{};
}

// Whether the grant is lost now: a key no longer names its session (or could not be read
// more than monitor_retries times in a row), or the session ended. Marks it so.
error_code loss_of(multi_lease_state& L) {
    if (L.lost)
        return L.lost;
    if (L.session->check(clock::now())) {
        L.mark_lost(L.session->lost);
        // Consul no longer knows the session: what the hubs know of the keys is out of date.
        if (L.lost == errc::session_invalidated)
            L.recipe->forget_all();
        return L.lost;
    }
    for (const auto& hub : L.recipe->hubs) {
        const bool gone =
            hub->known() && !(hub->entry() && hub->entry()->session == L.token.session);
        if (gone || hub->failures() > L.recipe->opts.monitor_retries) {
            L.mark_lost(make_error_code(errc::lock_lost));
            return L.lost;
        }
    }
    return {};
}

// async_wait_lost: a look at every key whenever one of them, the session or the grant
// changes, until the grant is lost. (A coroutine: a multi-lock is not the per-cycle path
// that grant_loss_wait's hand-written operation is for.)
asio::awaitable<error_code> wait_lost(std::shared_ptr<multi_lease_state> L) {
    std::vector<std::shared_ptr<void>> subscriptions;
    std::vector<detail::notifier*> ns;
    for (auto& hub : L->recipe->hubs) {
        subscriptions.push_back(hub->subscribe());
        ns.push_back(&hub->changed);
    }
    ns.push_back(&L->session->changed);
    ns.push_back(&L->changed);
    for (;;) {
        if (auto ec = loss_of(*L))
            co_return ec;
        co_await detail::notifier::wait_any_of(L->session->policy.deadline(), ns);
    }
}

asio::awaitable<std::pair<error_code, txn_result>> guarded_txn(std::shared_ptr<multi_lease_state> L,
                                                               std::vector<txn_op> ops) {
    using result = std::pair<error_code, txn_result>;
    const auto& keys = L->recipe->keys;
    if (ops.size() + keys.size() > detail::max_txn_ops)
        co_return result{make_error_code(errc::invalid_argument), txn_result{}};
    if (L->lost || L->released)
        co_return result{make_error_code(errc::lock_lost), txn_result{}};
    (void)detail::guard_ops(keys, L->token.session, ops); // (fits: checked above)
    auto [ec, t] =
        co_await detail::call(L->recipe->consul, detail::endpoint::txn{std::move(ops), {}});
    if (ec)
        co_return result{ec, txn_result{}};
    // The checks' own entries come first; errors are reported at the caller's positions.
    if (!detail::unguard_result(keys.size(), t)) {
        L->mark_lost(make_error_code(errc::lock_lost));
        co_return result{make_error_code(errc::lock_lost), std::move(t)};
    }
    co_return result{error_code{}, std::move(t)};
}

} // namespace

void detail::multi_lease_state::start_wait_lost(std::shared_ptr<grant_state> self,
                                                asio::any_completion_handler<void(error_code)> h) {
    spawn_op(executor(), wait_lost(std::static_pointer_cast<multi_lease_state>(std::move(self))),
             std::move(h));
}

void detail::multi_lease_state::start_release(std::shared_ptr<grant_state> self,
                                              asio::any_completion_handler<void(error_code)> h) {
    spawn_op(executor(),
             release_grant(std::static_pointer_cast<multi_lease_state>(std::move(self))),
             std::move(h));
}

void multi_lock_lease::guarded_txn_impl(
    state_ptr s, std::vector<txn_op> ops,
    asio::any_completion_handler<void(error_code, txn_result)> h) {
    detail::run_grant_op<detail::multi_lease_state>(std::move(s), std::move(h), [&](auto L) {
        return guarded_txn(std::move(L), std::move(ops));
    });
}

} // namespace conclave
