// SPDX-License-Identifier: BSL-1.0
#include "codec/json.hpp"
#include "codec/txn_body.hpp"
#include "consul/endpoints/agent.hpp"

#include <boost/json/parse.hpp>

namespace conclave::detail::endpoint {

namespace bhttp = boost::beast::http;
namespace json = boost::json;

error_code txn::build(api_call& call) const {
    call.endpoint = "txn";
    call.method = bhttp::verb::put;
    call.path = "/v1/txn";
    call.content_type = "application/json";
    if (options.mode == consistency::consistent)
        call.flag("consistent");
    else if (options.mode == consistency::stale)
        call.flag("stale");
    apply_options(call, options);
    call.body = codec::txn_body(ops, call.namespace_name, call.partition);
    return {};
}

std::pair<error_code, txn_result> txn::decode(const api_call& call, api_reply& reply) const {
    if (reply.status != 200 && reply.status != 409)
        return {status_error(call, reply), {}};
    txn_result r;
    r.committed = reply.status == 200;
    r.meta = reply.meta;
    if (!codec::parse_txn_reply(reply.body, r))
        return {parse_error(call, "bad transaction result"), {}};
    return {error_code{}, std::move(r)};
}

error_code status_leader::build(api_call& call) const {
    call.endpoint = "status_leader";
    call.path = "/v1/status/leader";
    call.one_entry = true;
    apply_options(call, options);
    apply_timeout(call, options.timeout);
    return {};
}

std::pair<error_code, std::string> status_leader::decode(const api_call& call,
                                                         api_reply& reply) const {
    if (reply.status != 200)
        return {status_error(call, reply), {}};
    error_code pec;
    auto v = json::parse(reply.body, pec);
    if (pec || !v.is_string())
        return {parse_error(call, "expected a JSON string"), {}};
    return {error_code{}, std::string(v.get_string())};
}

error_code agent_self::build(api_call& call) const {
    call.endpoint = "agent_self";
    call.path = "/v1/agent/self";
    call.one_entry = true;
    // The agent answers for itself: its options' datacenter is not sent (apply_options would).
    apply_scope(call, options);
    call.diag = options.diag;
    apply_timeout(call, options.timeout);
    return {};
}

std::pair<error_code, agent_info> agent_self::decode(const api_call& call, api_reply& reply) const {
    if (reply.status != 200)
        return {status_error(call, reply), {}};
    error_code pec;
    auto v = json::parse(reply.body, pec);
    const json::value* cfg = nullptr;
    if (!pec && v.is_object())
        cfg = v.get_object().if_contains("Config");
    if (!cfg || !cfg->is_object())
        return {parse_error(call, "no Config object"), {}};
    agent_info info;
    const auto& co = cfg->get_object();
    auto str = [&](std::string_view name) {
        auto* f = co.if_contains(name);
        return f && f->is_string() ? std::string(f->get_string()) : std::string();
    };
    info.node_name = str("NodeName");
    info.datacenter = str("Datacenter");
    info.version = str("Version");
    return {error_code{}, std::move(info)};
}

} // namespace conclave::detail::endpoint
