// SPDX-License-Identifier: BSL-1.0
// counter_hub: one blocking read of the key, its latest state for every local waiter.
#include "recipes/counter/counter_hub.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave::detail {

std::shared_ptr<counter_hub> counter_hub::of(const client& c, const std::string& key, settings s) {
    return find_or_make<counter_hub>(c, "counter-hub:" + key,
                                     [&] { return std::make_shared<counter_hub>(c, key, s); });
}

counter_hub::counter_hub(client c, std::string k, settings s)
    : shared_query(std::move(c), "counter-hub:" + k, s)
    , key(std::move(k)) {}

asio::awaitable<error_code> counter_hub::read_once(query_options q, asio::cancellation_slot stop) {
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
