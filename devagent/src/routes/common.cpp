// SPDX-License-Identifier: BSL-1.0
#include "devagent/src/go/gojson.hpp"
#include "devagent/src/routes/routes.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>

namespace conclave::dev::detail {

namespace json = boost::json;

http_response json_response(const json::value& v, unsigned status) {
    http_response r;
    r.status = status;
    r.set("Content-Type", "application/json");
    r.body = gojson::answer_body(v);
    return r;
}

http_response text_response(unsigned status, std::string text) {
    http_response r;
    r.status = status;
    if (!text.empty())
        r.set("Content-Type", sniff_content_type(text));
    r.body = std::move(text);
    return r;
}

http_response undecodable_body(const http_request& req) {
    if (req.body_error == body_too_large)
        return text_response(413, std::string(body_too_large));
    return text_response(400, "Request decode failed: " + req.body_error);
}

std::optional<http_response> decode_body(const http_request& req, gojson::value& out) {
    if (!req.body_error.empty())
        return undecodable_body(req);
    auto parsed = gojson::decode_first(req.body);
    if (!parsed.v)
        return text_response(400, "Request decode failed: " + parsed.error);
    out = std::move(*parsed.v);
    return std::nullopt;
}

void set_meta(http_response& r, std::uint64_t index, bool known_leader) {
    r.set("X-Consul-Index", std::to_string(index == 0 ? 1 : index));
    r.set("X-Consul-Knownleader", known_leader ? "true" : "false");
    r.set("X-Consul-Lastcontact", "0");
}

void set_leader_meta(http_response& r) {
    r.set("X-Consul-Lastcontact", "0");
    r.set("X-Consul-Knownleader", "true");
}

std::optional<http_response> namespace_refused(const http_request& req) {
    // Consul's BadRequestError, written by its handler wrapper: no X-Consul-* headers.
    if (req.namespace_header)
        return text_response(400, "Bad request: Invalid header: \"X-Consul-Namespace\" - "
                                  "Namespaces are a Consul Enterprise feature");
    if (const std::string* ns = req.query.find("ns"); ns != nullptr && !ns->empty())
        return text_response(400, "Bad request: Invalid query parameter: \"ns\" - "
                                  "Namespaces are a Consul Enterprise feature");
    return std::nullopt;
}

bool foreign_dc(const agent_impl& a, const http_request& req) {
    const std::string dc = req.query.get("dc");
    return !dc.empty() && dc != a.cfg.datacenter;
}

http_response no_path_to_dc() {
    return text_response(500, "No path to datacenter");
}

std::string_view path_rest(const http_request& req, std::string_view prefix) {
    const std::string_view path = req.path;
    if (path.size() >= prefix.size() && path.compare(0, prefix.size(), prefix) == 0)
        return path.substr(prefix.size());
    return {};
}

json::object check_json(const check_rec& c, std::string_view type, bool with_indexes) {
    json::object o;
    o["Node"] = c.node;
    o["CheckID"] = c.id;
    o["Name"] = c.name;
    o["Status"] = c.status;
    o["Notes"] = c.notes;
    o["Output"] = c.output;
    o["ServiceID"] = c.service_id;
    o["ServiceName"] = c.service_name;
    o["ServiceTags"] = json::array{};
    o["Type"] = type;
    o["Definition"] = json::object{};
    o["CreateIndex"] = with_indexes ? c.create_index : 0;
    o["ModifyIndex"] = with_indexes ? c.modify_index : 0;
    return o;
}

json::object session_json(const session_rec& s) {
    json::object o;
    o["ID"] = s.id;
    o["Name"] = s.name;
    o["Node"] = s.node;
    o["LockDelay"] = s.lock_delay_ns;
    o["Behavior"] = s.behavior;
    o["TTL"] = s.ttl;
    if (s.node_checks)
        o["NodeChecks"] = json::value_from(*s.node_checks);
    else
        o["NodeChecks"] = nullptr;
    if (s.service_checks) {
        json::array a;
        for (const auto& c : *s.service_checks) {
            json::object sc;
            sc["ID"] = c.id;
            sc["Namespace"] = c.ns;
            a.emplace_back(std::move(sc));
        }
        o["ServiceChecks"] = std::move(a);
    } else {
        o["ServiceChecks"] = nullptr;
    }
    if (!s.checks.empty())
        o["Checks"] = json::value_from(s.checks);
    o["CreateIndex"] = s.create_index;
    o["ModifyIndex"] = s.modify_index;
    return o;
}

} // namespace conclave::dev::detail
