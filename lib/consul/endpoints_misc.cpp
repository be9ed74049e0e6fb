// SPDX-License-Identifier: BSL-1.0
// /v1/txn, /v1/status/leader and /v1/agent/self.
#include "codec/json.hpp"
#include "codec/txn_body.hpp"
#include "consul/client_impl.hpp"
#include "consul/spawn.hpp"
#include "consul/txn_call.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace conclave {

namespace bhttp = boost::beast::http;
namespace json = boost::json;
using detail::api_call;
using clock = std::chrono::steady_clock;

namespace {

template <class T>
using op_result = std::pair<error_code, T>;

asio::awaitable<op_result<txn_result>> txn(std::shared_ptr<detail::client_impl> c,
                                           std::vector<txn_op> ops, txn_options o,
                                           std::optional<clock::time_point> deadline = {}) {
    api_call call;
    call.deadline = deadline;
    call.method = bhttp::verb::put;
    call.path = "/v1/txn";
    call.body = codec::txn_body(ops);
    call.content_type = "application/json";
    if (o.mode == consistency::consistent)
        call.flag("consistent");
    else if (o.mode == consistency::stale)
        call.flag("stale");
    call.datacenter = o.datacenter;
    call.diag = o.diag;
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<txn_result>{ec, {}};
    if (reply.status != 200 && reply.status != 409)
        co_return op_result<txn_result>{detail::status_error(call, reply), {}};
    txn_result r;
    r.committed = reply.status == 200;
    r.meta = reply.meta;
    if (!codec::parse_txn_reply(reply.body, r))
        co_return op_result<txn_result>{detail::parse_error(call, "bad transaction result"), {}};
    co_return op_result<txn_result>{error_code{}, std::move(r)};
}

asio::awaitable<op_result<std::string>> status_leader(std::shared_ptr<detail::client_impl> c,
                                                      write_options o) {
    api_call call;
    call.path = "/v1/status/leader";
    call.one_entry = true;
    call.datacenter = o.datacenter;
    call.diag = o.diag;
    detail::apply_timeout(call, o.timeout);
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<std::string>{ec, {}};
    if (reply.status != 200)
        co_return op_result<std::string>{detail::status_error(call, reply), {}};
    error_code pec;
    auto v = json::parse(reply.body, pec);
    if (pec || !v.is_string())
        co_return op_result<std::string>{detail::parse_error(call, "expected a JSON string"), {}};
    co_return op_result<std::string>{error_code{}, std::string(v.get_string())};
}

asio::awaitable<op_result<agent_info>> agent_self(std::shared_ptr<detail::client_impl> c,
                                                  write_options o) {
    api_call call;
    call.path = "/v1/agent/self";
    call.one_entry = true;
    call.diag = o.diag;
    detail::apply_timeout(call, o.timeout);
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<agent_info>{ec, {}};
    if (reply.status != 200)
        co_return op_result<agent_info>{detail::status_error(call, reply), {}};
    error_code pec;
    auto v = json::parse(reply.body, pec);
    const json::value* cfg = nullptr;
    if (!pec && v.is_object())
        cfg = v.get_object().if_contains("Config");
    if (!cfg || !cfg->is_object())
        co_return op_result<agent_info>{detail::parse_error(call, "no Config object"), {}};
    agent_info info;
    const auto& co = cfg->get_object();
    auto str = [&](std::string_view name) {
        auto* f = co.if_contains(name);
        return f && f->is_string() ? std::string(f->get_string()) : std::string();
    };
    info.node_name = str("NodeName");
    info.datacenter = str("Datacenter");
    info.version = str("Version");
    co_return op_result<agent_info>{error_code{}, std::move(info)};
}

} // namespace

namespace detail {

asio::awaitable<std::pair<error_code, txn_result>>
txn_call(const client& c, std::vector<txn_op> ops, std::optional<clock::time_point> deadline) {
    try {
        co_return co_await txn(client_access::impl(c).shared_from_this(), std::move(ops),
                               txn_options{}, deadline);
    } catch (...) {
        // Cancellation surfaces as a thrown operation_aborted at the next co_await.
        co_return op_result<txn_result>{error_from_exception(std::current_exception()), {}};
    }
}

} // namespace detail

void client::txn_impl(std::vector<txn_op> ops, txn_options o, handler<txn_result> h) {
    detail::spawn_op(impl_->executor, txn(impl_, std::move(ops), std::move(o)), std::move(h));
}

void client::status_leader_impl(write_options o, handler<std::string> h) {
    detail::spawn_op(impl_->executor, status_leader(impl_, std::move(o)), std::move(h));
}

void client::agent_self_impl(write_options o, handler<agent_info> h) {
    detail::spawn_op(impl_->executor, agent_self(impl_, std::move(o)), std::move(h));
}

} // namespace conclave
