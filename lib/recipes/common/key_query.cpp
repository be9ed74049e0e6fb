// SPDX-License-Identifier: BSL-1.0
// key_query: one blocking read of a key, its latest state for every local waiter.
#include "recipes/common/key_query.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave::detail {

std::shared_ptr<key_query> key_query::of(const client& c, const std::string& kind,
                                         const std::string& key, settings s) {
    const auto name = kind + "-hub:" + key;
    return find_or_make<key_query>(c, name,
                                   [&] { return std::make_shared<key_query>(c, name, key, s); });
}

key_query::key_query(client c, std::string registry_name, std::string k, settings s)
    : shared_query(std::move(c), std::move(registry_name), s)
    , key(std::move(k)) {}

asio::awaitable<error_code> key_query::read_once(query_options q, asio::cancellation_slot stop) {
    auto token = asio::bind_cancellation_slot(stop, asio::as_tuple(asio::use_awaitable));
    auto [ec, r] = co_await consul.async_kv_get(key, q, token);
    if (!ec && accept_read(r.meta.index)) {
        entry_ = std::move(r.entry);
        ++reads_;
        poke();
    }
    co_return ec;
}

} // namespace conclave::detail
