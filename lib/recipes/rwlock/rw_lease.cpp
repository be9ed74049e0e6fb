// SPDX-License-Identifier: BSL-1.0
// read_write_lease: the lost signal (the contender key still names our session), the
// release (its delete), and the changes of mode: upgrade and downgrade, each one
// transaction on the contender key.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "recipes/common/acquire_policy.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/common/grant_loss_wait.hpp"
#include "recipes/rwlock/rwlock_state.hpp"

#include <boost/asio/co_spawn.hpp>

namespace conclave {

using clock = std::chrono::steady_clock;
using detail::rw_lease_state;
using detail::rw_mode;

namespace {

// Deletes a held grant's contender key. The hub is not patched but waits for its next read:
// the grants it lets in here learn of the release from that read, whose index is past the
// delete, so their tokens are above the released grant's (an upgrade's may be above
// everything written before it, and a delete says no index of its own); and nobody here
// judges meanwhile on a state that still shows the released grant (an upgrade with a budget
// of 0 would refuse).
asio::awaitable<error_code> release_contender(detail::rwlock_state& l, const std::string& key) {
    auto [ec, deleted] =
        co_await detail::call(l.consul, detail::endpoint::kv_delete{key, kv_delete_options{}});
    (void)deleted; // (a key deleted already is released too)
    if (!ec)
        l.hub->released(key);
    co_return ec;
}

asio::awaitable<void> delete_until_done(std::shared_ptr<detail::rwlock_state> l,
                                        std::shared_ptr<detail::session_state> s, std::string key) {
    detail::retry_backoff backoff;
    while (!s->check(clock::now())) {
        const auto ec = co_await release_contender(*l, key);
        if (!ec)
            co_return;
        co_await detail::sleep_for(backoff.next());
    }
}

} // namespace

void detail::leave_for_good(std::shared_ptr<rwlock_state> l, std::shared_ptr<session_state> s,
                            std::string key) {
    auto ex = l->consul.get_executor();
    asio::co_spawn(ex, delete_until_done(std::move(l), std::move(s), std::move(key)),
                   [](std::exception_ptr) {});
}

namespace {

asio::awaitable<error_code> release_grant(std::shared_ptr<rw_lease_state> L) {
    if (L->released)
        co_return error_code{};
    // (a key deleted already is released too)
    if (auto ec = co_await release_contender(*L->recipe, L->contender_key))
        co_return ec; // unknown outcome: still counts as held, the caller may retry
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
    auto& lock = *L.recipe;
    std::vector<txn_op> ops;
    if (to == rw_mode::write) // (0: the sequence key was deleted since; absent it must stay)
        ops.push_back(sequence != 0 ? txn_op::check_index(lock.hub->sequence_key, sequence)
                                    : txn_op::check_not_exists(lock.hub->sequence_key));
    ops.push_back(txn_op::check_index(L.contender_key, L.written_index()));
    ops.push_back(
        txn_op::lock(L.contender_key, L.session->id, lock.opts.value,
                     to == rw_mode::write ? detail::rw_write_flags : detail::rw_read_flags));
    ops.push_back(txn_op::get(L.contender_key));
    std::pair<error_code, txn_result> answer;
    {
        const auto writing = lock.hub->writing(); // the hub's query waits for the transaction
        answer = co_await detail::call(lock.consul, detail::endpoint::txn{std::move(ops), {}});
    }
    auto& [ec, t] = answer;
    std::pair<error_code, std::optional<kv_entry>> out{ec, std::nullopt};
    if (ec)
        L.reconcile = true; // perhaps applied: read it back before the next change
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
    const auto& cs = L.recipe->hub->contenders();
    const auto at = detail::rw_find(cs, L.contender_key);
    return at && cs[*at].session == L.token.session;
}

// After a change of mode with no answer: waits for a fresh state of the key and takes mode
// and token from the contender key as Consul has it. False when the grant is not held.
asio::awaitable<bool> reconcile(rw_lease_state& L) {
    auto& hub = *L.recipe->hub;
    auto subscription = hub.subscribe();
    while (L.reconcile) {
        if (!L.held())
            co_return false;
        if (hub.known()) {
            const auto& cs = hub.contenders();
            const auto at = detail::rw_find(cs, L.contender_key);
            if (!at || cs[*at].session != L.token.session)
                co_return false;
            L.mode = cs[*at].mode;
            L.token.modify_index = std::max(L.token.modify_index, cs[*at].modify_index);
            L.reconcile = false;
            break;
        }
        co_await detail::notifier::wait_any(L.session->policy.deadline(), hub.changed,
                                            L.session->changed, L.changed);
    }
    co_return true;
}

asio::awaitable<std::pair<error_code, bool>> upgrade(std::shared_ptr<rw_lease_state> L,
                                                     std::chrono::milliseconds budget) {
    using result = std::pair<error_code, bool>;
    const bool known = co_await reconcile(*L);
    if (!known)
        co_return result{L->lost ? L->lost : make_error_code(errc::lock_lost), false};
    if (L->mode == rw_mode::write && L->held())
        co_return result{error_code{}, true};
    auto& hub = *L->recipe->hub;
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
    bool known = L->held().has_value();
    if (known) // (not in one expression with &&: g++ 12 cannot compile a co_await there)
        known = co_await reconcile(*L);
    if (!known)
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
    // Held while the contender key names our session (not deleted, not released).
    watch_for_loss(
        *this, std::move(self), [this] { return listed(*this); }, std::move(h));
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
    detail::run_grant_op<detail::rw_lease_state>(
        std::move(s), std::move(h), [&](auto L) { return upgrade(std::move(L), budget); });
}

void read_write_lease::downgrade_impl(state_ptr s,
                                      asio::any_completion_handler<void(error_code)> h) {
    detail::run_grant_op<detail::rw_lease_state>(std::move(s), std::move(h),
                                                 [](auto L) { return downgrade(std::move(L)); });
}

} // namespace conclave
