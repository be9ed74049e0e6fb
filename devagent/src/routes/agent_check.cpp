// SPDX-License-Identifier: BSL-1.0
// /v1/agent/check/... for TTL checks and GET /v1/agent/checks: agent/agent_endpoint.go
// (AgentRegisterCheck, AgentDeregisterCheck, AgentCheckPass/Warn/Fail, AgentCheckUpdate,
// AgentChecks), with Consul 1.8's answers. Only TTL checks: the dev agent runs no probes,
// so a check of another type is refused.
#include "codec/go/duration.hpp"
#include "devagent/src/go/gojson.hpp"
#include "devagent/src/routes/routes.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdlib>

namespace conclave::dev::detail {

namespace json = boost::json;
using gojson::kind;

namespace {

bool valid_status(std::string_view s) {
    return s == "passing" || s == "warning" || s == "critical";
}

// A string member of a check definition; another kind is Go's type error.
void read_string(const gojson::value& body, std::string_view name, std::string& out,
                 std::string& error) {
    const gojson::value* f = gojson::find_field(body, name);
    if (f == nullptr || f->is_null() || !error.empty())
        return;
    if (f->k == kind::string)
        out = f->text;
    else
        error = gojson::type_error(gojson::describe(*f), "CheckDefinition", name, "string");
}

// structs.CheckDefinition's TTL: a Go duration string, or a number of nanoseconds.
void read_ttl(const gojson::value& body, std::chrono::nanoseconds& ttl, std::string& error) {
    const gojson::value* f = gojson::find_field(body, "TTL");
    if (f == nullptr || f->is_null() || !error.empty())
        return;
    if (f->k == kind::number) {
        ttl = std::chrono::nanoseconds(std::strtoll(f->text.c_str(), nullptr, 10));
    } else if (f->k == kind::string) {
        const auto parsed = codec::go::parse_duration(f->text);
        if (parsed.value)
            ttl = *parsed.value;
        else
            error = parsed.error;
    } else {
        error = gojson::type_error(gojson::describe(*f), "CheckDefinition", "TTL", "string");
    }
}

// Any of the fields that make a check of another type than TTL.
bool probe_check(const gojson::value& body) {
    static constexpr std::string_view probes[] = {"HTTP",       "TCP",          "GRPC",
                                                  "ScriptArgs", "Args",         "DockerContainerID",
                                                  "AliasNode",  "AliasService", "Interval"};
    for (const auto p : probes)
        if (const gojson::value* f = gojson::find_field(body, p); f && !f->is_null())
            return true;
    return false;
}

http_response empty_ok() {
    return text_response(200, {});
}

// pass/warn/fail/update of a check this agent does not have as a TTL check.
http_response no_ttl(std::string_view id) {
    return text_response(500, "CheckID \"" + std::string(id) + "\" does not have associated TTL");
}

} // namespace

http_response agent_check_register(agent_impl& a, const http_request& req) {
    gojson::value body;
    if (auto refused = decode_body(req, body))
        return std::move(*refused);
    check_rec c;
    std::chrono::nanoseconds ttl{0};
    std::string error;
    if (body.k == kind::object) {
        read_string(body, "ID", c.id, error);
        read_string(body, "CheckID", c.id, error);
        read_string(body, "Name", c.name, error);
        read_string(body, "Notes", c.notes, error);
        read_string(body, "ServiceID", c.service_id, error);
        read_string(body, "Status", c.status, error);
        read_ttl(body, ttl, error);
    } else if (!body.is_null()) {
        error = gojson::type_error(gojson::describe(body), "", "", "structs.CheckDefinition");
    }
    if (!error.empty())
        return text_response(400, "Request decode failed: " + error);
    if (c.name.empty())
        return text_response(400, "Missing check name");
    if (!c.status.empty() && !valid_status(c.status))
        return text_response(400, "Bad check status");
    if (body.k == kind::object && probe_check(body))
        return text_response(400, "conclave dev agent: only TTL checks are supported");
    if (ttl.count() <= 0)
        return text_response(400, "Invalid check: TTL must be > 0 for TTL checks");
    if (c.id.empty())
        c.id = c.name;
    if (std::string err = a.register_check(std::move(c), ttl); !err.empty())
        return text_response(500, err);
    return empty_ok();
}

http_response agent_check_deregister(agent_impl& a, const http_request& req) {
    const std::string id(path_rest(req, "/v1/agent/check/deregister/"));
    if (id.empty())
        return text_response(500, "CheckID missing");
    a.deregister_check(id);
    return empty_ok();
}

http_response agent_check_set(agent_impl& a, const http_request& req) {
    // /v1/agent/check/<verb>/<id>: the route's pattern is one of pass, warn, fail.
    static constexpr std::pair<std::string_view, std::string_view> verbs[] = {
        {"/v1/agent/check/pass/", "passing"},
        {"/v1/agent/check/warn/", "warning"},
        {"/v1/agent/check/fail/", "critical"}};
    for (const auto& [prefix, status] : verbs) {
        if (!req.path.starts_with(prefix))
            continue;
        const std::string id(path_rest(req, prefix));
        const std::string* note = req.query.find("note");
        if (!a.update_check(id, std::string(status), note ? *note : std::string()))
            return no_ttl(id);
        return empty_ok();
    }
    return text_response(404, {});
}

http_response agent_check_update(agent_impl& a, const http_request& req) {
    gojson::value body;
    if (auto refused = decode_body(req, body))
        return std::move(*refused);
    std::string status, output, error;
    if (body.k == kind::object) {
        read_string(body, "Status", status, error);
        read_string(body, "Output", output, error);
    }
    if (!error.empty())
        return text_response(400, "Request decode failed: " + error);
    if (!valid_status(status))
        return text_response(400, "Invalid check status: '" + status + "'");
    const std::string id(path_rest(req, "/v1/agent/check/update/"));
    if (!a.update_check(id, status, output))
        return no_ttl(id);
    return empty_ok();
}

http_response agent_checks(agent_impl& a, const http_request&) {
    json::object out;
    for (const auto& [id, c] : a.agent_checks)
        out[id] = check_json(c.rec, "ttl", false); // (the agent's view has no indexes)
    return json_response(out);
}

} // namespace conclave::dev::detail
