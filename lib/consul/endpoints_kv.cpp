// SPDX-License-Identifier: BSL-1.0
// KV endpoints: /v1/kv/<key> GET (single, raw, recurse, keys), PUT, DELETE.
#include "codec/json.hpp"
#include "consul/blocking/shared_key_read.hpp"
#include "consul/client_impl.hpp"
#include "consul/spawn.hpp"

#include <boost/json/parse.hpp>

namespace conclave {

namespace bhttp = boost::beast::http;
namespace json = boost::json;
using detail::api_call;
using detail::api_reply;

namespace {

template <class T>
using op_result = std::pair<error_code, T>;

error_code invalid_key(diagnostics* diag, std::string_view key) {
    if (diag) {
        diag->http_status = 0;
        diag->server_message.clear();
        diag->client_message =
            "Invalid key '" + std::string(key) + "': a key must not begin with '/' or contain '//'";
    }
    return make_error_code(errc::invalid_argument);
}

asio::awaitable<op_result<kv_get_result>> kv_get(std::shared_ptr<detail::client_impl> c,
                                                 std::string key, query_options q) {
    api_call call;
    auto path = detail::kv_path(key, true);
    if (!path)
        co_return op_result<kv_get_result>{invalid_key(q.diag, key), {}};
    if (q.index > 0 && c->blocking_lane->crowded()) {
        // No connection to spare for one more blocking query: share the folder's.
        std::string_view k = key;
        if (!k.empty() && k.front() == '/')
            k.remove_prefix(1);
        const auto folder = detail::sharing_folder(k);
        if (folder && detail::folder_shareable(*c, std::string(*folder))) {
            auto shared =
                co_await detail::shared_key_read(c, std::string(k), std::string(*folder), q);
            using how = detail::shared_read::outcome;
            if (shared.how == how::answered)
                co_return op_result<kv_get_result>{shared.ec, std::move(shared.result)};
            if (shared.how == how::wait_over)
                q.index = 0; // the key as it is now, as Consul answers when a wait ends
        }
    }
    call.path = std::move(*path);
    call.one_entry = true;
    detail::apply_query(call, q);
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<kv_get_result>{ec, {}};
    kv_get_result r;
    r.meta = reply.meta;
    if (reply.status == 404)
        co_return op_result<kv_get_result>{error_code{}, std::move(r)};
    if (reply.status != 200)
        co_return op_result<kv_get_result>{detail::status_error(call, reply), {}};
    std::vector<kv_entry> entries;
    if (!codec::parse_kv_entries(reply.body, entries) || entries.size() != 1)
        co_return op_result<kv_get_result>{detail::parse_error(call, "expected one KV entry"), {}};
    r.entry = std::move(entries.front());
    co_return op_result<kv_get_result>{error_code{}, std::move(r)};
}

asio::awaitable<op_result<kv_raw_result>> kv_get_raw(std::shared_ptr<detail::client_impl> c,
                                                     std::string key, query_options q) {
    api_call call;
    auto path = detail::kv_path(key, true);
    if (!path)
        co_return op_result<kv_raw_result>{invalid_key(q.diag, key), {}};
    call.path = std::move(*path);
    call.one_entry = true;
    call.flag("raw");
    detail::apply_query(call, q);
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<kv_raw_result>{ec, {}};
    kv_raw_result r;
    r.meta = reply.meta;
    if (reply.status == 404)
        co_return op_result<kv_raw_result>{error_code{}, std::move(r)};
    if (reply.status != 200)
        co_return op_result<kv_raw_result>{detail::status_error(call, reply), {}};
    r.value = std::move(reply.body);
    co_return op_result<kv_raw_result>{error_code{}, std::move(r)};
}

asio::awaitable<op_result<kv_list_result>> kv_list(std::shared_ptr<detail::client_impl> c,
                                                   std::string prefix, query_options q) {
    api_call call;
    auto path = detail::kv_path(prefix, true);
    if (!path)
        co_return op_result<kv_list_result>{invalid_key(q.diag, prefix), {}};
    call.path = std::move(*path);
    call.flag("recurse");
    detail::apply_query(call, q);
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<kv_list_result>{ec, {}};
    kv_list_result r;
    r.meta = reply.meta;
    if (reply.status == 404)
        co_return op_result<kv_list_result>{error_code{}, std::move(r)};
    if (reply.status != 200)
        co_return op_result<kv_list_result>{detail::status_error(call, reply), {}};
    if (!codec::parse_kv_entries(reply.body, r.entries))
        co_return op_result<kv_list_result>{detail::parse_error(call, "bad KV list"), {}};
    co_return op_result<kv_list_result>{error_code{}, std::move(r)};
}

asio::awaitable<op_result<kv_keys_result>> kv_keys(std::shared_ptr<detail::client_impl> c,
                                                   std::string prefix, kv_keys_options o) {
    api_call call;
    auto path = detail::kv_path(prefix, true);
    if (!path)
        co_return op_result<kv_keys_result>{invalid_key(o.query.diag, prefix), {}};
    call.path = std::move(*path);
    call.flag("keys");
    if (!o.separator.empty())
        call.param("separator", o.separator);
    detail::apply_query(call, o.query);
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<kv_keys_result>{ec, {}};
    kv_keys_result r;
    r.meta = reply.meta;
    if (reply.status == 404)
        co_return op_result<kv_keys_result>{error_code{}, std::move(r)};
    if (reply.status != 200)
        co_return op_result<kv_keys_result>{detail::status_error(call, reply), {}};
    error_code pec;
    auto v = json::parse(reply.body, pec);
    if (pec || !v.is_array())
        co_return op_result<kv_keys_result>{detail::parse_error(call, "bad key list"), {}};
    for (const auto& k : v.get_array()) {
        if (!k.is_string())
            co_return op_result<kv_keys_result>{detail::parse_error(call, "bad key list"), {}};
        r.keys.emplace_back(k.get_string());
    }
    co_return op_result<kv_keys_result>{error_code{}, std::move(r)};
}

// Consul answers writes with a bare JSON true/false.
op_result<bool> parse_bool_reply(const api_call& call, const api_reply& reply) {
    if (reply.status != 200)
        return {detail::status_error(call, reply), false};
    std::string_view body = reply.body;
    while (!body.empty() && (body.back() == '\n' || body.back() == ' '))
        body.remove_suffix(1);
    if (body == "true")
        return {error_code{}, true};
    if (body == "false")
        return {error_code{}, false};
    return {detail::parse_error(call, "expected true or false"), false};
}

asio::awaitable<op_result<bool>> kv_put(std::shared_ptr<detail::client_impl> c, std::string key,
                                        std::string value, kv_put_options o) {
    api_call call;
    call.method = bhttp::verb::put;
    call.diag = o.diag;
    detail::apply_timeout(call, o.timeout);
    auto path = detail::kv_path(key, false);
    if (!path || key.empty())
        co_return op_result<bool>{invalid_key(o.diag, key), false};
    const int modes = int(o.cas.has_value()) + int(!o.acquire.empty()) + int(!o.release.empty());
    if (modes > 1) {
        if (o.diag)
            o.diag->client_message = "at most one of cas, acquire and release may be set";
        co_return op_result<bool>{make_error_code(errc::invalid_argument), false};
    }
    call.path = std::move(*path);
    call.one_entry = true; // true or false
    if (o.flags != 0)
        call.param("flags", std::to_string(o.flags));
    if (o.cas)
        call.param("cas", std::to_string(*o.cas));
    if (!o.acquire.empty())
        call.param("acquire", o.acquire);
    if (!o.release.empty())
        call.param("release", o.release);
    call.datacenter = o.datacenter;
    call.body = std::move(value);
    call.content_type = "application/octet-stream";
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<bool>{ec, false};
    co_return parse_bool_reply(call, reply);
}

asio::awaitable<op_result<bool>> kv_delete(std::shared_ptr<detail::client_impl> c, std::string key,
                                           kv_delete_options o) {
    api_call call;
    call.method = bhttp::verb::delete_;
    call.diag = o.diag;
    detail::apply_timeout(call, o.timeout);
    auto path = detail::kv_path(key, true);
    if (!path)
        co_return op_result<bool>{invalid_key(o.diag, key), false};
    call.path = std::move(*path);
    call.one_entry = true; // true or false
    if (o.recurse)
        call.flag("recurse");
    if (o.cas)
        call.param("cas", std::to_string(*o.cas));
    call.datacenter = o.datacenter;
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<bool>{ec, false};
    co_return parse_bool_reply(call, reply);
}

} // namespace

void client::kv_get_impl(std::string key, query_options q, handler<kv_get_result> h) {
    detail::spawn_op(impl_->executor, kv_get(impl_, std::move(key), std::move(q)), std::move(h));
}

void client::kv_get_raw_impl(std::string key, query_options q, handler<kv_raw_result> h) {
    detail::spawn_op(impl_->executor, kv_get_raw(impl_, std::move(key), std::move(q)),
                     std::move(h));
}

void client::kv_list_impl(std::string prefix, query_options q, handler<kv_list_result> h) {
    detail::spawn_op(impl_->executor, kv_list(impl_, std::move(prefix), std::move(q)),
                     std::move(h));
}

void client::kv_keys_impl(std::string prefix, kv_keys_options o, handler<kv_keys_result> h) {
    detail::spawn_op(impl_->executor, kv_keys(impl_, std::move(prefix), std::move(o)),
                     std::move(h));
}

void client::kv_put_impl(std::string key, std::string value, kv_put_options o, handler<bool> h) {
    detail::spawn_op(impl_->executor, kv_put(impl_, std::move(key), std::move(value), std::move(o)),
                     std::move(h));
}

void client::kv_delete_impl(std::string key, kv_delete_options o, handler<bool> h) {
    detail::spawn_op(impl_->executor, kv_delete(impl_, std::move(key), std::move(o)), std::move(h));
}

} // namespace conclave
