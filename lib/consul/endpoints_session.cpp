// SPDX-License-Identifier: BSL-1.0
// Session endpoints: /v1/session/{create,renew,destroy,info,list,node}.
#include "codec/go/duration.hpp"
#include "codec/json.hpp"
#include "consul/client_impl.hpp"
#include "consul/spawn.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace conclave {

namespace bhttp = boost::beast::http;
namespace json = boost::json;
using detail::api_call;
using detail::api_reply;

namespace {

template <class T>
using op_result = std::pair<error_code, T>;

std::string create_body(const session_options& o) {
    json::object body;
    if (!o.name.empty())
        body["Name"] = o.name;
    if (!o.node.empty())
        body["Node"] = o.node;
    if (o.lock_delay) // an explicit 0 is sent: it disables the lock-delay
        body["LockDelay"] = codec::go::format_duration(*o.lock_delay);
    body["Behavior"] = o.behavior == session_behavior::delete_keys ? "delete" : "release";
    if (o.ttl.count() > 0)
        body["TTL"] = codec::go::format_duration(o.ttl);
    if (o.node_checks) {
        json::array checks;
        for (const auto& id : *o.node_checks)
            checks.emplace_back(id);
        if (checks.empty())
            body["Checks"] = json::array{}; // agents older than 1.7 only know "Checks"
        body["NodeChecks"] = std::move(checks);
    }
    if (!o.service_checks.empty()) {
        json::array checks;
        for (const auto& c : o.service_checks)
            checks.emplace_back(json::object{{"ID", c.id}, {"Namespace", c.ns}});
        body["ServiceChecks"] = std::move(checks);
    }
    return json::serialize(body);
}

bool parse_sessions(const std::string& body, std::vector<session_entry>& out) {
    error_code ec;
    unsigned char scratch[codec::parse_scratch_size];
    json::monotonic_resource mr(scratch, sizeof scratch);
    auto v = json::parse(body, ec, &mr);
    if (ec)
        return false;
    if (v.is_null())
        return true;
    if (!v.is_array())
        return false;
    for (const auto& item : v.get_array()) {
        session_entry s;
        if (!codec::session_entry_from_json(item, s))
            return false;
        out.push_back(std::move(s));
    }
    return true;
}

error_code check_id(const std::string& id, diagnostics* diag) {
    if (!id.empty())
        return {};
    if (diag)
        diag->client_message = "missing session ID";
    return make_error_code(errc::invalid_argument);
}

asio::awaitable<op_result<std::string>> session_create(std::shared_ptr<detail::client_impl> c,
                                                       session_options o) {
    api_call call;
    call.method = bhttp::verb::put;
    call.path = "/v1/session/create";
    call.one_entry = true;
    call.body = create_body(o);
    call.content_type = "application/json";
    call.datacenter = o.datacenter;
    call.diag = o.diag;
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<std::string>{ec, {}};
    if (reply.status != 200)
        co_return op_result<std::string>{detail::status_error(call, reply), {}};
    error_code pec;
    auto v = json::parse(reply.body, pec);
    const json::value* id = nullptr;
    if (!pec && v.is_object())
        id = v.get_object().if_contains("ID");
    if (!id || !id->is_string() || id->get_string().empty())
        co_return op_result<std::string>{detail::parse_error(call, "no session ID in reply"), {}};
    co_return op_result<std::string>{error_code{}, std::string(id->get_string())};
}

asio::awaitable<op_result<session_entry>> session_renew(std::shared_ptr<detail::client_impl> c,
                                                        std::string id, write_options o) {
    if (auto ec = check_id(id, o.diag))
        co_return op_result<session_entry>{ec, {}};
    api_call call;
    call.method = bhttp::verb::put;
    call.path = "/v1/session/renew/" + detail::encode_segment(id);
    call.one_entry = true;
    call.finish_once_sent = false; // a renewal undoes nothing and is undone by nothing
    call.datacenter = o.datacenter;
    call.diag = o.diag;
    detail::apply_timeout(call, o.timeout);
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<session_entry>{ec, {}};
    if (reply.status == 404) {
        detail::status_error(call, reply); // fills diag with Consul's text
        co_return op_result<session_entry>{make_error_code(errc::session_invalidated), {}};
    }
    if (reply.status != 200)
        co_return op_result<session_entry>{detail::status_error(call, reply), {}};
    std::vector<session_entry> sessions;
    if (!parse_sessions(reply.body, sessions))
        co_return op_result<session_entry>{detail::parse_error(call, "bad session entry"), {}};
    if (sessions.empty())
        co_return op_result<session_entry>{make_error_code(errc::session_invalidated), {}};
    co_return op_result<session_entry>{error_code{}, std::move(sessions.front())};
}

asio::awaitable<op_result<bool>> session_destroy(std::shared_ptr<detail::client_impl> c,
                                                 std::string id, write_options o) {
    if (auto ec = check_id(id, o.diag))
        co_return op_result<bool>{ec, false};
    api_call call;
    call.method = bhttp::verb::put;
    call.path = "/v1/session/destroy/" + detail::encode_segment(id);
    call.one_entry = true;
    call.datacenter = o.datacenter;
    call.diag = o.diag;
    detail::apply_timeout(call, o.timeout);
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<bool>{ec, false};
    if (reply.status != 200)
        co_return op_result<bool>{detail::status_error(call, reply), false};
    co_return op_result<bool>{error_code{}, reply.body.find("true") != std::string::npos};
}

asio::awaitable<op_result<session_list_result>> session_read(std::shared_ptr<detail::client_impl> c,
                                                             std::string path, query_options q) {
    api_call call;
    call.path = std::move(path);
    detail::apply_query(call, q);
    auto [ec, reply] = co_await c->send(call);
    if (ec)
        co_return op_result<session_list_result>{ec, {}};
    if (reply.status != 200)
        co_return op_result<session_list_result>{detail::status_error(call, reply), {}};
    session_list_result r;
    r.meta = reply.meta;
    if (!parse_sessions(reply.body, r.sessions))
        co_return op_result<session_list_result>{detail::parse_error(call, "bad session list"), {}};
    co_return op_result<session_list_result>{error_code{}, std::move(r)};
}

asio::awaitable<op_result<session_info_result>> session_info(std::shared_ptr<detail::client_impl> c,
                                                             std::string id, query_options q) {
    if (auto ec = check_id(id, q.diag))
        co_return op_result<session_info_result>{ec, {}};
    auto [ec, list] =
        co_await session_read(c, "/v1/session/info/" + detail::encode_segment(id), std::move(q));
    session_info_result r;
    r.meta = list.meta;
    if (!list.sessions.empty())
        r.session = std::move(list.sessions.front());
    co_return op_result<session_info_result>{ec, std::move(r)};
}

} // namespace

void client::session_create_impl(session_options o, handler<std::string> h) {
    detail::spawn_op(impl_->executor, session_create(impl_, std::move(o)), std::move(h));
}

void client::session_renew_impl(std::string id, write_options o, handler<session_entry> h) {
    detail::spawn_op(impl_->executor, session_renew(impl_, std::move(id), std::move(o)),
                     std::move(h));
}

void client::session_destroy_impl(std::string id, write_options o, handler<bool> h) {
    detail::spawn_op(impl_->executor, session_destroy(impl_, std::move(id), std::move(o)),
                     std::move(h));
}

void client::session_info_impl(std::string id, query_options q, handler<session_info_result> h) {
    detail::spawn_op(impl_->executor, session_info(impl_, std::move(id), std::move(q)),
                     std::move(h));
}

void client::session_list_impl(query_options q, handler<session_list_result> h) {
    detail::spawn_op(impl_->executor, session_read(impl_, "/v1/session/list", std::move(q)),
                     std::move(h));
}

void client::session_node_impl(std::string node, query_options q, handler<session_list_result> h) {
    detail::spawn_op(
        impl_->executor,
        session_read(impl_, "/v1/session/node/" + detail::encode_segment(node), std::move(q)),
        std::move(h));
}

} // namespace conclave
