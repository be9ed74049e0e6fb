// SPDX-License-Identifier: BSL-1.0
// list_hub: one blocking list of a prefix, kept by the hub for every local waiter.
#include "recipes/common/list_hub.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave::detail {

list_hub::list_hub(client c, std::string registry_name, std::string listed, settings s)
    : shared_query(std::move(c), std::move(registry_name), s)
    , listed_(std::move(listed)) {}

std::shared_ptr<void> list_hub::writing() {
    ++writes_in_flight_;
    auto self = std::static_pointer_cast<list_hub>(shared_from_this());
    return std::shared_ptr<void>(nullptr, [self](void*) {
        --self->writes_in_flight_;
        self->poke(); // the query may go on
    });
}

asio::awaitable<error_code> list_hub::read_once(query_options q, asio::cancellation_slot stop) {
    auto token = asio::bind_cancellation_slot(stop, asio::as_tuple(asio::use_awaitable));
    auto [ec, r] = co_await consul.async_kv_list(listed_, q, token);
    if (!ec && accept_read(r.meta.index)) {
        store(std::move(r.entries));
        poke();
    }
    co_return ec;
}

} // namespace conclave::detail
