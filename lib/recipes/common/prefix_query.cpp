// SPDX-License-Identifier: BSL-1.0
// prefix_query: one blocking list of a prefix, its latest state for every local waiter.
#include "recipes/common/prefix_query.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave::detail {

std::shared_ptr<prefix_query> prefix_query::of(const client& c, const std::string& kind,
                                               const std::string& prefix, settings s) {
    const auto name = kind + "-hub:" + prefix;
    return find_or_make<prefix_query>(
        c, name, [&] { return std::make_shared<prefix_query>(c, name, prefix, s); });
}

prefix_query::prefix_query(client c, std::string registry_name, std::string p, settings s)
    : shared_query(std::move(c), std::move(registry_name), s)
    , prefix(std::move(p)) {}

asio::awaitable<error_code> prefix_query::read_once(query_options q, asio::cancellation_slot stop) {
    auto token = asio::bind_cancellation_slot(stop, asio::as_tuple(asio::use_awaitable));
    auto [ec, r] = co_await consul.async_kv_list(prefix, q, token);
    if (!ec && accept_read(r.meta.index)) {
        entries_ = std::move(r.entries);
        ++reads_;
        poke();
    }
    co_return ec;
}

} // namespace conclave::detail
