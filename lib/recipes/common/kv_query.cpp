// SPDX-License-Identifier: BSL-1.0
// kv_query: one blocking read of a key or a prefix, its latest state for every local waiter.
#include "recipes/common/kv_query.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave::detail {

namespace {

template <class Token>
auto read_target(key_read, client& c, const std::string& key, query_options q, Token token) {
    return c.async_kv_get(key, std::move(q), std::move(token));
}

template <class Token>
auto read_target(prefix_read, client& c, const std::string& prefix, query_options q, Token token) {
    return c.async_kv_list(prefix, std::move(q), std::move(token));
}

std::optional<kv_entry> take(kv_get_result& r) {
    return std::move(r.entry);
}

std::vector<kv_entry> take(kv_list_result& r) {
    return std::move(r.entries);
}

} // namespace

template <class Read>
std::shared_ptr<kv_query<Read>> kv_query<Read>::of(const client& c, const std::string& kind,
                                                   const std::string& target, settings s) {
    const auto name = kind + "-hub:" + target;
    return find_or_make<kv_query>(c, name,
                                  [&] { return std::make_shared<kv_query>(c, name, target, s); });
}

template <class Read>
kv_query<Read>::kv_query(client c, std::string registry_name, std::string t, settings s)
    : shared_query(std::move(c), std::move(registry_name), s)
    , target(std::move(t)) {}

template <class Read>
asio::awaitable<error_code> kv_query<Read>::read_once(query_options q,
                                                      asio::cancellation_slot stop) {
    auto token = asio::bind_cancellation_slot(stop, asio::as_tuple(asio::use_awaitable));
    auto [ec, r] = co_await read_target(Read{}, consul, target, q, token);
    if (!ec && accept_read(r.meta.index)) {
        value_ = take(r);
        ++reads_;
        poke();
    }
    co_return ec;
}

template class kv_query<key_read>;
template class kv_query<prefix_read>;

} // namespace conclave::detail
