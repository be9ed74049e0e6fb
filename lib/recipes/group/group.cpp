// SPDX-License-Identifier: BSL-1.0
// class group: joins (a session-bound write of the member's key, after a read that judges
// what holds it), one read of the members, and its watches.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "recipes/common/acquire_driver.hpp"
#include "recipes/common/acquire_policy.hpp"
#include "recipes/common/as_terminal.hpp"
#include "recipes/common/cas_race_backoff.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/group/group_members.hpp"
#include "recipes/group/group_state.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>
#include <string>
#include <utility>

namespace conclave {

namespace {

using clock = std::chrono::steady_clock;
using detail::group_state;
using detail::member_state;
using join_result = std::pair<error_code, membership>;

// Fails a join with `ec`, `text` its message.
join_result refuse(error_code ec, diagnostics* diag, std::string text) {
    if (diag) {
        diag->clear();
        diag->client_message = std::move(text);
    }
    return join_result{ec, membership{}};
}

// A join's write whose answer never came may have made the key ours: undone in the
// background (deleted if our session still holds it). Not awaited: a key it misses goes
// with the session.
void undo_join(client c, std::string key, std::string session) {
    auto undo = [](client consul, std::string k, std::string s) -> asio::awaitable<void> {
        std::vector<txn_op> ops{txn_op::check_session(k, s), txn_op::remove(k)};
        co_await consul.async_txn(std::move(ops), txn_options{},
                                  asio::as_tuple(asio::use_awaitable));
    };
    asio::co_spawn(c.get_executor(), undo(c, std::move(key), std::move(session)),
                   [](std::exception_ptr) {});
}

asio::awaitable<join_result> join_loop(std::shared_ptr<group_state> G,
                                       std::shared_ptr<detail::session_state> S, std::string id,
                                       std::string value, diagnostics* diag) {
    const auto key = G->key_of(id);
    const auto until = clock::now() + G->budget();
    detail::lock_delay_backoff delay{std::chrono::milliseconds{1000}};
    detail::cas_race_backoff race;
    for (;;) {
        if (S->check(clock::now()))
            co_return refuse(S->lost, diag, "join " + key + ": the session is lost");
        diagnostics said;
        auto [read_error, read] = co_await detail::call(
            G->consul, detail::endpoint::kv_get{key, query_options{}.with_diag(&said)}, until);
        if (read_error) {
            if (diag)
                *diag = said;
            co_return join_result{read_error, membership{}};
        }
        const auto judged = detail::judge_join(key, read.entry, S->id);
        if (judged.verdict == detail::join_verdict::conflict ||
            judged.verdict == detail::join_verdict::held)
            co_return refuse(make_error_code(errc::conflict), diag, "join: " + judged.problem);

        std::vector<txn_op> ops;
        if (judged.verdict == detail::join_verdict::absent)
            ops.push_back(txn_op::check_not_exists(key));
        else
            ops.push_back(txn_op::check_index(key, read.entry->modify_index));
        ops.push_back(txn_op::lock(key, S->id, value, group_member_flag_value));
        auto writing = G->hub->writing();
        auto [ec, t] = co_await detail::call(G->consul, detail::endpoint::txn{std::move(ops), {}},
                                             detail::attempt_deadline(until));
        writing.reset();
        if (ec) {
            if (judged.verdict != detail::join_verdict::ours)
                undo_join(G->consul, key, S->id);
            co_return refuse(ec, diag, "join " + key + ": the write failed (undone if applied)");
        }
        if (t.committed && !t.results.empty()) {
            const auto& e = t.results.back();
            G->hub->wrote(member_info{id, value, S->id, e.create_index, e.modify_index});
            auto m = std::make_shared<member_state>(
                G, S, fencing_token{key, S->id, e.lock_index, e.modify_index}, id);
            co_return join_result{error_code{}, group_state::handle(std::move(m))};
        }
        switch (detail::classify_refusal(t.errors)) {
        case detail::refusal::session_gone:
            S->gone_on_server = true;
            S->mark_lost(make_error_code(errc::session_invalidated));
            co_return refuse(S->lost, diag, "join " + key + ": Consul no longer knows the session");
        case detail::refusal::denied:
            co_return refuse(make_error_code(errc::permission_denied), diag,
                             "join " + key + ": " + t.errors.front().what);
        case detail::refusal::lock_delay:
            if (clock::now() >= until)
                co_return refuse(make_error_code(errc::timeout), diag,
                                 "join " + key + ": the key's lock-delay outlasted the budget");
            co_await detail::sleep_for(delay.next(), until);
            break;
        default: // the key changed between the read and the write: read it again
            if (clock::now() >= until)
                co_return refuse(make_error_code(errc::timeout), diag,
                                 "join " + key + ": the key kept changing for the whole budget");
            co_await detail::sleep_for(race.next(), until);
            break;
        }
    }
}

// join_loop; an exception out of it (a cancellation between requests) joined nothing.
asio::awaitable<join_result> join(std::shared_ptr<group_state> G,
                                  std::shared_ptr<detail::session_state> S, std::string id,
                                  std::string value, diagnostics* diag) {
    if (auto why = detail::member_id_problem(id); !why.empty())
        co_return refuse(make_error_code(errc::invalid_argument), diag, "join: " + why);
    try {
        co_return co_await join_loop(std::move(G), std::move(S), std::move(id), std::move(value),
                                     diag);
    } catch (...) {
        co_return refuse(detail::error_from_exception(std::current_exception()), diag,
                         "join: ended before its write; nothing joined");
    }
}

using members_result = std::pair<error_code, std::vector<member_info>>;

asio::awaitable<members_result> read_members(std::shared_ptr<group_state> G, diagnostics* diag) {
    co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation(),
                                                       detail::as_terminal{});
    diagnostics said;
    auto [ec, r] = co_await detail::call(
        G->consul, detail::endpoint::kv_list{G->key + "/", query_options{}.with_diag(&said)});
    if (diag)
        *diag = ec ? said : diagnostics{};
    if (ec)
        co_return members_result{ec, {}};
    co_return members_result{error_code{}, detail::members_of(G->key, r.entries)};
}

std::string without_trailing_slash(std::string p) {
    while (!p.empty() && p.back() == '/')
        p.pop_back();
    return p;
}

} // namespace

group::group(client& c, std::string prefix, group_options opts) {
    prefix = without_trailing_slash(std::move(prefix));
    if (prefix.empty())
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "a group needs a prefix");
    state_ = std::make_shared<group_state>(c, std::move(prefix), opts);
}

const std::string& group::prefix() const noexcept {
    return state_->key;
}

group_watch group::watch() const {
    return group_watch{std::make_shared<detail::group_watch_state>(state_)};
}

void group::join_impl(state_ptr G, session_ptr S, std::string id, std::string value,
                      detail::diagnostics_route* route,
                      asio::any_completion_handler<void(error_code, membership)> h) {
    if (!S)
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "group::async_join needs a session");
    auto* diag = detail::diagnostics_route::target(route, G->opts.diag);
    auto ex = G->consul.get_executor();
    detail::spawn_op(ex, join(std::move(G), std::move(S), std::move(id), std::move(value), diag),
                     std::move(h));
}

void group::members_impl(
    state_ptr G, detail::diagnostics_route* route,
    asio::any_completion_handler<void(error_code, std::vector<member_info>)> h) {
    auto* diag = detail::diagnostics_route::target(route, G->opts.diag);
    auto ex = G->consul.get_executor();
    detail::spawn_op(ex, read_members(std::move(G), diag), std::move(h));
}

} // namespace conclave
