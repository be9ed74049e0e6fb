// SPDX-License-Identifier: BSL-1.0
#include "codec/go/duration.hpp"
#include "codec/json.hpp"
#include "consul/endpoints/session.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace conclave::detail::endpoint {

namespace bhttp = boost::beast::http;
namespace json = boost::json;

namespace {

// A list of sessions (every session endpoint but create answers one); `null` is none.
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

// A write to /v1/session/<what>/<id>.
error_code build_id_write(api_call& call, std::string_view what, const std::string& id,
                          const write_options& o) {
    if (auto ec = require_id(id, "session", o.diag))
        return ec;
    call.method = bhttp::verb::put;
    call.path = "/v1/session/" + std::string(what) + '/' + encode_segment(id);
    call.one_entry = true;
    apply_options(call, o);
    apply_timeout(call, o.timeout);
    return {};
}

// What every session read does: 200 and a list of sessions, or an error.
std::pair<error_code, session_list_result> decode_list(const api_call& call,
                                                       const api_reply& reply) {
    if (reply.status != 200)
        return {status_error(call, reply), {}};
    session_list_result r;
    r.meta = reply.meta;
    if (!parse_sessions(reply.body, r.sessions))
        return {parse_error(call, "bad session list"), {}};
    return {error_code{}, std::move(r)};
}

} // namespace

std::optional<std::string> refused_check(std::string_view body) {
    // A server that is not the leader forwards the create and prefixes the leader's error.
    static constexpr std::string_view forwarded = "rpc error making call: ";
    while (body.starts_with(forwarded))
        body.remove_prefix(forwarded.size());
    const auto between = [&](std::string_view head,
                             std::string_view tail) -> std::optional<std::string> {
        if (body.size() <= head.size() + tail.size() || !body.starts_with(head) ||
            !body.ends_with(tail))
            return std::nullopt;
        return std::string(body.substr(head.size(), body.size() - head.size() - tail.size()));
    };
    if (auto id = between("Check '", "' is in critical state"))
        return id;
    return between("Missing check '", "' registration");
}

std::string session_create_body(const session_options& o) {
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

error_code session_create::build(api_call& call) const {
    call.endpoint = "session_create";
    call.method = bhttp::verb::put;
    call.path = "/v1/session/create";
    call.one_entry = true;
    call.body = session_create_body(options);
    call.content_type = "application/json";
    apply_options(call, options);
    return {};
}

std::pair<error_code, std::string> session_create::decode(const api_call& call,
                                                          api_reply& reply) const {
    if (reply.status != 200) {
        const auto ec = status_error(call, reply);
        if (reply.status == 500 && refused_check(reply.body))
            return {make_error_code(errc::check_critical), {}};
        return {ec, {}};
    }
    error_code pec;
    auto v = json::parse(reply.body, pec);
    const json::value* id = nullptr;
    if (!pec && v.is_object())
        id = v.get_object().if_contains("ID");
    if (!id || !id->is_string() || id->get_string().empty())
        return {parse_error(call, "no session ID in reply"), {}};
    return {error_code{}, std::string(id->get_string())};
}

error_code session_renew::build(api_call& call) const {
    call.endpoint = "session_renew";
    if (auto ec = build_id_write(call, "renew", id, options))
        return ec;
    call.finish_once_sent = false; // a renewal undoes nothing and is undone by nothing
    return {};
}

std::pair<error_code, session_entry> session_renew::decode(const api_call& call,
                                                           api_reply& reply) const {
    if (reply.status == 404) {
        status_error(call, reply); // fills diag with Consul's text
        return {make_error_code(errc::session_invalidated), {}};
    }
    if (reply.status != 200)
        return {status_error(call, reply), {}};
    std::vector<session_entry> sessions;
    if (!parse_sessions(reply.body, sessions))
        return {parse_error(call, "bad session entry"), {}};
    if (sessions.empty())
        return {make_error_code(errc::session_invalidated), {}};
    return {error_code{}, std::move(sessions.front())};
}

error_code session_destroy::build(api_call& call) const {
    call.endpoint = "session_destroy";
    return build_id_write(call, "destroy", id, options);
}

std::pair<error_code, bool> session_destroy::decode(const api_call& call, api_reply& reply) const {
    if (reply.status != 200)
        return {status_error(call, reply), false};
    return {error_code{}, reply.body.find("true") != std::string::npos};
}

error_code session_info::build(api_call& call) const {
    call.endpoint = "session_info";
    if (auto ec = require_id(id, "session", query.diag))
        return ec;
    call.path = "/v1/session/info/" + encode_segment(id);
    apply_query(call, query);
    return {};
}

std::pair<error_code, session_info_result> session_info::decode(const api_call& call,
                                                                api_reply& reply) const {
    auto [ec, list] = decode_list(call, reply);
    session_info_result r;
    r.meta = list.meta;
    if (!list.sessions.empty())
        r.session = std::move(list.sessions.front());
    return {ec, std::move(r)};
}

error_code session_list::build(api_call& call) const {
    call.endpoint = node ? "session_node" : "session_list";
    call.path = node ? "/v1/session/node/" + encode_segment(*node) : "/v1/session/list";
    apply_query(call, query);
    return {};
}

std::pair<error_code, session_list_result> session_list::decode(const api_call& call,
                                                                api_reply& reply) const {
    return decode_list(call, reply);
}

} // namespace conclave::detail::endpoint
