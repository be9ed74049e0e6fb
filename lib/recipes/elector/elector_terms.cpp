// SPDX-License-Identifier: BSL-1.0
// elector: the candidates in line (async_participants) and a new value for the current term
// (async_proclaim).
#include "consul/endpoint.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "recipes/elector/elector_state.hpp"
#include "recipes/elector/participants.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave {

namespace {

using detail::elector_state;
using line_result = std::pair<error_code, std::vector<participant>>;

asio::awaitable<line_result> read_line(std::shared_ptr<elector_state> E) {
    // The key and its contender keys in one read of the key's prefix.
    auto [ec, r] =
        co_await detail::call(E->consul, detail::endpoint::kv_list{E->key, query_options{}});
    if (ec)
        co_return line_result{ec, {}};
    co_return detail::participants_of(E->key, r.entries);
}

asio::awaitable<error_code> proclaim(std::shared_ptr<elector_state> E, std::string value) {
    const auto term = E->held_term();
    if (!term)
        co_return make_error_code(errc::invalid_argument); // not leading
    // `lock` with the session that holds the key rewrites it in place: Consul keeps its
    // LockIndex (a plain write would reset it to 0), so the term and its token stay.
    std::vector<txn_op> ops{
        txn_op::lock(E->key, term->token().session, std::move(value), lock_flag_value)};
    auto [ec, t] =
        co_await term->async_guarded_txn(std::move(ops), asio::as_tuple(asio::use_awaitable));
    if (!ec && !t.committed)
        ec = make_error_code(errc::conflict); // (the guard passed: not expected)
    co_return ec;
}

} // namespace

void elector::participants_impl(
    state_ptr E, asio::any_completion_handler<void(error_code, std::vector<participant>)> h) {
    auto ex = E->consul.get_executor();
    detail::spawn_op(ex, read_line(std::move(E)), std::move(h));
}

void elector::proclaim_impl(state_ptr E, std::string value,
                            asio::any_completion_handler<void(error_code)> h) {
    auto ex = E->consul.get_executor();
    detail::spawn_op(ex, proclaim(std::move(E), std::move(value)), std::move(h));
}

} // namespace conclave
