// SPDX-License-Identifier: BSL-1.0
// read_write_lease: the lost signal (the contender key still names our session), the
// release (its delete), and the changes of mode: upgrade and downgrade, each one
// transaction on the contender key.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/common/grant_loss_wait.hpp"
#include "recipes/rwlock/rwlock_state.hpp"

namespace conclave {

using clock = std::chrono::steady_clock;
using detail::rw_lease_state;
using detail::rw_mode;

namespace {

asio::awaitable<error_code> release_grant(std::shared_ptr<rw_lease_state> L) {
    if (L->released)
        co_return error_code{};
    auto& lock = *L->lock;
    auto [ec, deleted] = co_await detail::call(
        lock.consul, detail::endpoint::kv_delete{L->contender_key, kv_delete_options{}});
    (void)deleted; // (a key deleted already is released too)
    if (ec)
        co_return ec; // unknown outcome: still counts as held, the caller may retry
    lock.hub->contender_gone(L->contender_key);
    L->mark_released();
    L->mark_lost(make_error_code(errc::lock_lost)); // wakes the waits for the loss
    co_return error_code{};
}

// Rewrites the grant's contender key with the flags of `to`, checked against the index the
// grant last wrote it at, and against the sequence key's index `sequence` when not 0 (an
// upgrade: nobody came since the state it was judged on). Returns the key as written, or
// none when Consul refused (the key or the sequence changed).
asio::awaitable<std::pair<error_code, std::optional<kv_entry>>>
change_mode(rw_lease_state& L, rw_mode to, std::uint64_t sequence) {
    auto& lock = *L.lock;
    std::vector<txn_op> ops;
    if (sequence != 0)
        ops.push_back(txn_op::check_index(lock.hub->sequence_key, sequence));
    ops.push_back(txn_op::check_index(L.contender_key, L.written_index()));
    ops.push_back(
        txn_op::lock(L.contender_key, L.session->id, lock.opts.value,
                     to == rw_mode::write ? detail::rw_write_flags : detail::rw_read_flags));
    ops.push_back(txn_op::get(L.contender_key));
    ++lock.hub->writes_in_flight;
    auto [ec, t] = co_await detail::call(lock.consul, detail::endpoint::txn{std::move(ops), {}});
    --lock.hub->writes_in_flight;
    std::pair<error_code, std::optional<kv_entry>> out{ec, std::nullopt};
    if (!ec && t.committed && !t.results.empty()) {
        out.second = t.results.back();
        L.mode = to;
        L.token.modify_index = out.second->modify_index;
        lock.hub->saw_write(*out.second);
    } else {
        lock.hub->forget(); // refused, or unknown: read the key again
    }
    co_return out;
}

// Whether the grant's contender key still names its session in the hub's known state.
bool listed(const rw_lease_state& L) {
    const auto& cs = L.lock->hub->contenders();
    const auto at = detail::rw_find(cs, L.contender_key);
    return at && cs[*at].session == L.token.session;
}

asio::awaitable<std::pair<error_code, bool>> upgrade(std::shared_ptr<rw_lease_state> L,
                                                     std::chrono::milliseconds budget) {
    using result = std::pair<error_code, bool>;
    if (L->mode == rw_mode::write && L->held())
        co_return result{error_code{}, true};
    auto& hub = *L->lock->hub;
    auto subscription = hub.subscribe();
    const auto deadline = clock::now() + budget;
    bool looked = false;
    for (;;) {
        if (!L->held())
            co_return result{L->lost ? L->lost : make_error_code(errc::lock_lost), false};
        if (hub.known() && hub.state_index() >= L->written_index()) {
            if (!listed(*L)) {
                L->mark_lost(make_error_code(errc::lock_lost));
                co_return result{L->lost, false};
            }
            const auto& cs = hub.contenders();
            looked = true;
            if (detail::rw_may_upgrade(cs, *detail::rw_find(cs, L->contender_key))) {
                auto [ec, written] = co_await change_mode(*L, rw_mode::write, hub.sequence_index());
                if (ec)
                    co_return result{ec, false};
                if (written)
                    co_return result{error_code{}, true};
                continue; // someone came meanwhile: judge again on a fresh read
            }
        }
        if (looked && clock::now() >= deadline)
            co_return result{error_code{}, false};
        auto until = L->session->policy.deadline();
        if (clock::now() < deadline)
            until = std::min(until, deadline);
        co_await detail::notifier::wait_any(until, hub.changed, L->session->changed, L->changed);
    }
}

asio::awaitable<error_code> downgrade(std::shared_ptr<rw_lease_state> L) {
    if (!L->held())
        co_return L->lost ? L->lost : make_error_code(errc::lock_lost);
    if (L->mode == rw_mode::read)
        co_return error_code{};
    auto [ec, written] = co_await change_mode(*L, rw_mode::read, 0);
    if (ec)
        co_return ec;
    if (!written) { // the key changed since we wrote it: not ours as we held it
        L->mark_lost(make_error_code(errc::lock_lost));
        co_return L->lost;
    }
    co_return error_code{};
}

} // namespace

void detail::rw_lease_state::start_wait_lost(std::shared_ptr<grant_state> self,
                                             asio::any_completion_handler<void(error_code)> h) {
    auto& H = *lock->hub;
    // Held while the contender key names our session (not deleted, not released).
    auto still_held = [this] { return listed(*this); };
    start_grant_loss_wait(executor(), std::move(self), H, lock->opts.monitor_retries, still_held,
                          std::move(h));
}

void detail::rw_lease_state::start_release(std::shared_ptr<grant_state> self,
                                           asio::any_completion_handler<void(error_code)> h) {
    spawn_op(executor(), release_grant(std::static_pointer_cast<rw_lease_state>(std::move(self))),
             std::move(h));
}

bool read_write_lease::writing() const noexcept {
    return static_cast<const rw_lease_state&>(*state_).mode == rw_mode::write;
}

void read_write_lease::upgrade_impl(state_ptr s, std::chrono::milliseconds budget,
                                    asio::any_completion_handler<void(error_code, bool)> h) {
    if (!s)
        return detail::refuse_empty_grant(std::move(h));
    auto L = std::static_pointer_cast<rw_lease_state>(std::move(s));
    auto ex = L->executor();
    detail::spawn_op(ex, upgrade(std::move(L), budget), std::move(h));
}

void read_write_lease::downgrade_impl(state_ptr s,
                                      asio::any_completion_handler<void(error_code)> h) {
    if (!s)
        return detail::refuse_empty_grant(std::move(h));
    auto L = std::static_pointer_cast<rw_lease_state>(std::move(s));
    auto ex = L->executor();
    detail::spawn_op(ex, downgrade(std::move(L)), std::move(h));
}

} // namespace conclave
