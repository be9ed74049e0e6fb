#include "dev/gojson.hpp"
#include "dev/routes.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <array>

namespace conclave::dev::detail {

namespace json = boost::json;

http_response json_response(const json::value& v, unsigned status) {
    http_response r;
    r.status = status;
    r.set("Content-Type", "application/json");
    r.body = gojson::marshal_indent(v);
    return r;
}

http_response json_text_response(std::string body, unsigned status) {
    http_response r;
    r.status = status;
    r.set("Content-Type", "application/json");
    r.body = std::move(body);
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

void set_meta(http_response& r, std::uint64_t index, bool known_leader) {
    r.set("X-Consul-Index", std::to_string(index == 0 ? 1 : index));
    r.set("X-Consul-Knownleader", known_leader ? "true" : "false");
    r.set("X-Consul-Lastcontact", "0");
}

void set_leader_meta(http_response& r) {
    r.set("X-Consul-Lastcontact", "0");
    r.set("X-Consul-Knownleader", "true");
}

bool foreign_dc(const agent_impl& a, const http_request& req) {
    const std::string dc = req.query.get("dc");
    return !dc.empty() && dc != a.cfg.datacenter;
}

std::string_view path_rest(const http_request& req, std::string_view prefix) {
    const std::string_view path = req.path;
    if (path.size() >= prefix.size() && path.compare(0, prefix.size(), prefix) == 0)
        return path.substr(prefix.size());
    return {};
}

json::object session_json(const session_rec& s) {
    json::object o;
    o["ID"] = s.id;
    o["Name"] = s.name;
    o["Node"] = s.node;
    o["LockDelay"] = s.lock_delay_ns;
    o["Behavior"] = s.behavior;
    o["TTL"] = s.ttl;
    if (s.node_checks) {
        json::array a;
        for (const auto& c : *s.node_checks)
            a.emplace_back(c);
        o["NodeChecks"] = std::move(a);
    } else {
        o["NodeChecks"] = nullptr;
    }
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
    if (!s.checks.empty()) {
        json::array a;
        for (const auto& c : s.checks)
            a.emplace_back(c);
        o["Checks"] = std::move(a);
    }
    o["CreateIndex"] = s.create_index;
    o["ModifyIndex"] = s.modify_index;
    return o;
}

void write_session(gojson::indent_writer& w, const session_rec& s) {
    w.begin_object();
    w.key("ID");
    w.string(s.id);
    w.key("Name");
    w.string(s.name);
    w.key("Node");
    w.string(s.node);
    w.key("LockDelay");
    w.number(s.lock_delay_ns);
    w.key("Behavior");
    w.string(s.behavior);
    w.key("TTL");
    w.string(s.ttl);
    w.key("NodeChecks");
    if (s.node_checks) {
        w.begin_array();
        for (const auto& c : *s.node_checks)
            w.string(c);
        w.end_array();
    } else {
        w.null();
    }
    w.key("ServiceChecks");
    if (s.service_checks) {
        w.begin_array();
        for (const auto& c : *s.service_checks) {
            w.begin_object();
            w.key("ID");
            w.string(c.id);
            w.key("Namespace");
            w.string(c.ns);
            w.end_object();
        }
        w.end_array();
    } else {
        w.null();
    }
    if (!s.checks.empty()) {
        w.key("Checks");
        w.begin_array();
        for (const auto& c : s.checks)
            w.string(c);
        w.end_array();
    }
    w.key("CreateIndex");
    w.number(s.create_index);
    w.key("ModifyIndex");
    w.number(s.modify_index);
    w.end_object();
}

void write_kv_entry(gojson::indent_writer& w, const kv_entry& e, bool with_value) {
    using member = gojson::indent_writer::member;
    using type = member::type;
    std::array<member, 7> members;
    std::size_t n = 0;
    members[n++] = {"LockIndex", type::number, {}, e.lock_index};
    members[n++] = {"Key", type::string, e.key, 0};
    members[n++] = {"Flags", type::number, {}, e.flags};
    if (with_value && !e.value.empty())
        members[n++] = {"Value", type::base64, e.value, 0};
    else
        members[n++] = {"Value", type::null, {}, 0};
    if (!e.session.empty())
        members[n++] = {"Session", type::string, e.session, 0};
    members[n++] = {"CreateIndex", type::number, {}, e.create_index};
    members[n++] = {"ModifyIndex", type::number, {}, e.modify_index};
    w.object(std::span<const member>(members.data(), n));
}

} // namespace conclave::dev::detail
