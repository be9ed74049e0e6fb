// SPDX-License-Identifier: BSL-1.0
// membership: the lost signal (the prefix's shared query, session loss, local deadline),
// updates of the member's value in place, and leaving.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/spawn.hpp"
#include "recipes/common/acquire_policy.hpp"
#include "recipes/common/grant_loss_wait.hpp"
#include "recipes/group/group_state.hpp"

#include <algorithm>

namespace conclave {

using detail::member_state;

namespace {

// A transaction guarded by "the key is still held by our session" (first op): whether the
// guard is what failed.
bool guard_failed(const txn_result& t) {
    return std::any_of(t.errors.begin(), t.errors.end(),
                       [](const txn_error& e) { return e.op_index == 0; });
}

void tell(diagnostics* diag, std::string text) {
    if (diag) {
        diag->clear();
        diag->client_message = std::move(text);
    }
}

asio::awaitable<error_code> update(std::shared_ptr<member_state> M, std::string value,
                                   diagnostics* diag) {
    const auto& key = M->token.key;
    if (!M->held()) {
        tell(diag, "update " + key + ": no longer a member");
        co_return make_error_code(errc::lock_lost);
    }
    auto& G = *M->recipe;
    // `lock` with the session that holds the key keeps its LockIndex (a plain write would
    // reset it to 0): the member's token stays the same.
    std::vector<txn_op> ops{txn_op::check_session(key, M->token.session),
                            txn_op::lock(key, M->token.session, value, group_member_flag_value)};
    auto writing = G.hub->writing();
    auto [ec, t] = co_await detail::call(G.consul, detail::endpoint::txn{std::move(ops), {}},
                                         std::chrono::steady_clock::now() + G.budget());
    writing.reset();
    if (ec) {
        tell(diag, "update " + key + ": the write failed; its outcome is unknown");
        co_return ec;
    }
    if (!t.committed) {
        if (guard_failed(t)) {
            M->mark_lost(make_error_code(errc::lock_lost));
            tell(diag, "update " + key + ": the key is no longer held by the member's session");
            co_return make_error_code(errc::lock_lost);
        }
        tell(diag, "update " + key + ": " + (t.errors.empty() ? "refused" : t.errors[0].what));
        co_return detail::classify_refusal(t.errors) == detail::refusal::denied
            ? make_error_code(errc::permission_denied)
            : make_error_code(errc::conflict);
    }
    if (!t.results.empty()) {
        const auto& e = t.results.back();
        M->written = e.modify_index;
        G.hub->wrote(
            member_info{M->id, std::move(value), M->token.session, e.create_index, e.modify_index});
    }
    if (diag)
        diag->clear();
    co_return error_code{};
}

asio::awaitable<error_code> leave(std::shared_ptr<member_state> M) {
    if (M->released || M->lost) {
        M->mark_released();
        co_return error_code{};
    }
    auto& G = *M->recipe;
    const auto& key = M->token.key;
    std::vector<txn_op> ops{txn_op::check_session(key, M->token.session), txn_op::remove(key)};
    auto writing = G.hub->writing();
    auto [ec, t] = co_await detail::call(G.consul, detail::endpoint::txn{std::move(ops), {}},
                                         std::chrono::steady_clock::now() + G.budget());
    writing.reset();
    if (ec) {
        M->holds = 1; // still a member: the leave may be tried again
        co_return ec;
    }
    // Deleted, or no longer ours (gone already): either way not a member any more.
    (void)t;
    M->mark_released();
    G.hub->forget(); // the delete's index is not known: read afresh
    co_return error_code{};
}

} // namespace

void detail::member_state::start_wait_lost(std::shared_ptr<grant_state> self,
                                           asio::any_completion_handler<void(error_code)> h) {
    // Held while the hub has the key with our session, or knows nothing newer than our last
    // write of it (a read answered before that write).
    auto still_held = [&H = *recipe->hub, &M = *this] {
        const auto* m = H.member(M.id);
        return (m && m->session == M.token.session) || H.state_index() < M.written;
    };
    watch_for_loss(*this, std::move(self), still_held, std::move(h));
}

void detail::member_state::start_release(std::shared_ptr<grant_state> self,
                                         asio::any_completion_handler<void(error_code)> h) {
    spawn_op(executor(), leave(std::static_pointer_cast<member_state>(std::move(self))),
             std::move(h));
}

const std::string& membership::id() const noexcept {
    return static_cast<const member_state&>(*state_).id;
}

void membership::update_impl(state_ptr s, std::string value, detail::diagnostics_route* route,
                             asio::any_completion_handler<void(error_code)> h) {
    auto* diag = s ? detail::diagnostics_route::target(
                         route, static_cast<member_state&>(*s).recipe->opts.diag)
                   : nullptr;
    detail::run_grant_op<member_state>(std::move(s), std::move(h), [&](auto M) {
        return update(std::move(M), std::move(value), diag);
    });
}

} // namespace conclave
