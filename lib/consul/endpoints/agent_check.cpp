// SPDX-License-Identifier: BSL-1.0
#include "codec/go/duration.hpp"
#include "consul/endpoints/agent_check.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

namespace conclave::detail::endpoint {

namespace bhttp = boost::beast::http;
namespace json = boost::json;

namespace {

// Consul's words for a check status: the status a check is registered with, and the verb
// of its update endpoint (/v1/agent/check/<verb>/<id>).
struct status_words {
    const char* status;
    const char* verb;
};

status_words words_of(check_status s) {
    switch (s) {
    case check_status::passing:
        return {"passing", "pass"};
    case check_status::warning:
        return {"warning", "warn"};
    case check_status::critical:
        break;
    }
    return {"critical", "fail"};
}

// The agent answers for itself: like agent/self, no datacenter is sent.
void agent_write(api_call& call, const write_options& o) {
    call.method = bhttp::verb::put;
    call.one_entry = true;
    apply_scope(call, o);
    call.diag = o.diag;
    apply_timeout(call, o.timeout);
}

// A write to /v1/agent/check/<what>/<id>.
error_code build_id_write(api_call& call, std::string_view what, const std::string& id,
                          const write_options& o) {
    if (auto ec = require_id(id, "check", o.diag))
        return ec;
    call.path = "/v1/agent/check/" + std::string(what) + '/' + encode_segment(id);
    agent_write(call, o);
    return {};
}

} // namespace

std::pair<error_code, bool> agent_check_write::decode(const api_call& call,
                                                      api_reply& reply) const {
    if (reply.status != 200)
        return {status_error(call, reply), false};
    return {error_code{}, true};
}

std::string check_register_body(const agent_check_options& o) {
    json::object body;
    if (!o.id.empty())
        body["ID"] = o.id;
    body["Name"] = o.name;
    if (!o.service_id.empty())
        body["ServiceID"] = o.service_id;
    body["TTL"] = codec::go::format_duration(o.ttl);
    if (o.status)
        body["Status"] = words_of(*o.status).status;
    if (!o.notes.empty())
        body["Notes"] = o.notes;
    return json::serialize(body);
}

error_code agent_check_register::build(api_call& call) const {
    call.endpoint = "agent_check_register";
    if (options.name.empty() || options.ttl.count() <= 0) {
        if (options.diag)
            options.diag->client_message = "a TTL check needs a name and a positive TTL";
        return make_error_code(errc::invalid_argument);
    }
    call.path = "/v1/agent/check/register";
    call.body = check_register_body(options);
    call.content_type = "application/json";
    agent_write(call, write_options{}.with_timeout(options.timeout).with_diag(options.diag));
    apply_scope(call, options);
    return {};
}

error_code agent_check_deregister::build(api_call& call) const {
    call.endpoint = "agent_check_deregister";
    return build_id_write(call, "deregister", id, options);
}

error_code agent_check_update::build(api_call& call) const {
    call.endpoint = "agent_check_update";
    if (auto ec = build_id_write(call, words_of(status).verb, id, options))
        return ec;
    if (!note.empty())
        call.param("note", note);
    return {};
}

} // namespace conclave::detail::endpoint
