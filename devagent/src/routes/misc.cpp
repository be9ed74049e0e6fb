// SPDX-License-Identifier: BSL-1.0
// Status, agent/self, and the catalog pieces sessions are bound to (register, deregister,
// and a few reads to look at them).
#include "devagent/src/go/gojson.hpp"
#include "devagent/src/routes/routes.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>

namespace conclave::dev::detail {

namespace json = boost::json;
using gojson::kind;

namespace {

constexpr const char* consul_version = "1.8.0";

// Decoding helpers for the catalog bodies: strict about types, like encoding/json, and
// matching names case-insensitively.
class body_reader {
public:
    std::string error;

    void str(const gojson::value& o, std::string_view name, std::string& out, std::string_view st) {
        if (const gojson::value* f = field(o, name, kind::string, st, "string"))
            out = f->text;
    }
    void boolean(const gojson::value& o, std::string_view name, bool& out, std::string_view st) {
        if (const gojson::value* f = field(o, name, kind::boolean, st, "bool"))
            out = f->b;
    }
    void integer(const gojson::value& o, std::string_view name, std::int64_t& out,
                 std::string_view st) {
        const gojson::value* f = field(o, name, kind::number, st, "int");
        if (f == nullptr)
            return;
        try {
            std::size_t used = 0;
            out = std::stoll(f->text, &used);
            if (used != f->text.size())
                fail(gojson::type_error("number " + f->text, st, name, "int"));
        } catch (const std::exception&) {
            fail(gojson::type_error("number " + f->text, st, name, "int"));
        }
    }
    void strings(const gojson::value& o, std::string_view name, std::vector<std::string>& out,
                 std::string_view st) {
        const gojson::value* f = field(o, name, kind::array, st, "[]string");
        if (f == nullptr)
            return;
        out.clear();
        for (const auto& item : f->items) {
            if (item.k == kind::string)
                out.push_back(item.text);
            else if (item.is_null())
                out.emplace_back();
            else
                fail(gojson::type_error(gojson::describe(item), st, name, "string"));
        }
    }
    void string_map(const gojson::value& o, std::string_view name,
                    std::map<std::string, std::string>& out, std::string_view st) {
        const gojson::value* f = field(o, name, kind::object, st, "map[string]string");
        if (f == nullptr)
            return;
        for (const auto& [k, v] : f->members) {
            if (v.k == kind::string)
                out[k] = v.text;
            else if (!v.is_null())
                fail(gojson::type_error(gojson::describe(v), st, name, "string"));
        }
    }

private:
    // Member `name` of `o` when it is there, not null and of kind `k`. Missing and null
    // leave the target as it is; another kind is Go's type error for `go_type` (field
    // `name` of struct `st`), and nothing to read.
    const gojson::value* field(const gojson::value& o, std::string_view name, kind k,
                               std::string_view st, std::string_view go_type) {
        const gojson::value* f = gojson::find_field(o, name);
        if (f == nullptr || f->is_null())
            return nullptr;
        if (f->k == k)
            return f;
        fail(gojson::type_error(gojson::describe(*f), st, name, go_type));
        return nullptr;
    }
    void fail(std::string e) {
        if (error.empty())
            error = std::move(e);
    }
};

check_rec read_check(body_reader& rd, const gojson::value& c) {
    check_rec out;
    rd.str(c, "Node", out.node, "HealthCheck");
    rd.str(c, "CheckID", out.id, "HealthCheck");
    rd.str(c, "Name", out.name, "HealthCheck");
    rd.str(c, "Status", out.status, "HealthCheck");
    rd.str(c, "Notes", out.notes, "HealthCheck");
    rd.str(c, "Output", out.output, "HealthCheck");
    rd.str(c, "ServiceID", out.service_id, "HealthCheck");
    rd.str(c, "ServiceName", out.service_name, "HealthCheck");
    return out;
}

// Decodes a catalog write's body as encoding/json decodes it into structs.<request>: an
// object goes to `read` (its Datacenter read here), null leaves everything empty. Returns
// the answer when the write goes no further: a body that cannot be decoded, or another
// datacenter's. Nothing: go on.
template <class Read>
std::optional<http_response> read_catalog_body(agent_impl& a, const http_request& req,
                                               const std::string& request, Read read) {
    gojson::value v;
    if (auto refused = decode_body(req, v))
        return refused;
    std::string datacenter;
    body_reader rd;
    if (v.k == kind::object) {
        rd.str(v, "Datacenter", datacenter, request);
        read(rd, v);
    } else if (!v.is_null()) {
        rd.error = gojson::type_error(gojson::describe(v), "", "", "structs." + request);
    }
    if (!rd.error.empty())
        return text_response(400, "Request decode failed: " + rd.error);
    if ((!datacenter.empty() && datacenter != a.cfg.datacenter) || foreign_dc(a, req))
        return no_path_to_dc();
    return std::nullopt;
}

json::object node_json(const node_rec& n) {
    json::object o;
    o["ID"] = n.id;
    o["Node"] = n.name;
    o["Address"] = n.address;
    o["Datacenter"] = n.datacenter;
    o["TaggedAddresses"] = json::value_from(n.tagged_addresses);
    o["Meta"] = json::value_from(n.meta);
    o["CreateIndex"] = n.create_index;
    o["ModifyIndex"] = n.modify_index;
    return o;
}

json::object service_json(const service_rec& s) {
    json::object o;
    o["ID"] = s.id;
    o["Service"] = s.service;
    o["Tags"] = json::value_from(s.tags);
    o["Address"] = s.address;
    o["Port"] = s.port;
    o["CreateIndex"] = s.create_index;
    o["ModifyIndex"] = s.modify_index;
    return o;
}

// A catalog or health read's answer: `out`, as of the store's last index (these reads do not
// block).
http_response catalog_answer(const agent_impl& a, const json::value& out) {
    http_response r = json_response(out);
    set_meta(r, a.state.last_index());
    return r;
}

} // namespace

http_response status_leader(agent_impl& a, const http_request& req) {
    if (foreign_dc(a, req))
        return no_path_to_dc();
    return json_response(json::value("127.0.0.1:8300"));
}

http_response status_peers(agent_impl& a, const http_request& req) {
    if (foreign_dc(a, req))
        return no_path_to_dc();
    json::array peers;
    peers.emplace_back("127.0.0.1:8300");
    return json_response(peers);
}

http_response agent_self(agent_impl& a, const http_request&) {
    json::object config;
    config["Datacenter"] = a.cfg.datacenter;
    config["NodeName"] = a.cfg.node_name;
    config["NodeID"] = a.node_id;
    config["Revision"] = "conclave-dev";
    config["Server"] = true;
    config["Version"] = consul_version;
    json::object tags;
    tags["dc"] = a.cfg.datacenter;
    tags["role"] = "consul";
    tags["id"] = a.node_id;
    json::object member;
    member["Name"] = a.cfg.node_name;
    member["Addr"] = "127.0.0.1";
    member["Port"] = 8301;
    member["Tags"] = std::move(tags);
    member["Status"] = 1;
    json::object meta;
    meta["consul-network-segment"] = "";
    json::object self;
    self["Config"] = std::move(config);
    self["Coord"] = nullptr;
    self["Member"] = std::move(member);
    self["Stats"] = json::object{};
    self["Meta"] = std::move(meta);
    return json_response(self);
}

http_response catalog_register(agent_impl& a, const http_request& req) {
    register_request r;
    auto refused =
        read_catalog_body(a, req, "RegisterRequest", [&](body_reader& rd, const gojson::value& v) {
            rd.str(v, "ID", r.id, "RegisterRequest");
            rd.str(v, "Node", r.node, "RegisterRequest");
            rd.str(v, "Address", r.address, "RegisterRequest");
            rd.string_map(v, "TaggedAddresses", r.tagged_addresses, "RegisterRequest");
            rd.string_map(v, "NodeMeta", r.meta, "RegisterRequest");
            rd.boolean(v, "SkipNodeUpdate", r.skip_node_update, "RegisterRequest");
            if (const auto* s = gojson::find_field(v, "Service"); s && s->k == kind::object) {
                service_rec svc;
                rd.str(*s, "ID", svc.id, "NodeService");
                rd.str(*s, "Service", svc.service, "NodeService");
                rd.strings(*s, "Tags", svc.tags, "NodeService");
                rd.str(*s, "Address", svc.address, "NodeService");
                rd.integer(*s, "Port", svc.port, "NodeService");
                r.service = std::move(svc);
            }
            if (const auto* c = gojson::find_field(v, "Check"); c && c->k == kind::object)
                r.checks.push_back(read_check(rd, *c));
            if (const auto* cs = gojson::find_field(v, "Checks"); cs && cs->k == kind::array)
                for (const auto& c : cs->items)
                    if (c.k == kind::object)
                        r.checks.push_back(read_check(rd, c));
        });
    if (refused)
        return std::move(*refused);
    if (std::string err = a.state.catalog_register(std::move(r), std::chrono::steady_clock::now());
        !err.empty())
        return text_response(500, err);
    return json_response(json::value(true));
}

http_response catalog_deregister(agent_impl& a, const http_request& req) {
    std::string node, service_id, check_id;
    auto refused = read_catalog_body(a, req, "DeregisterRequest",
                                     [&](body_reader& rd, const gojson::value& v) {
                                         rd.str(v, "Node", node, "DeregisterRequest");
                                         rd.str(v, "ServiceID", service_id, "DeregisterRequest");
                                         rd.str(v, "CheckID", check_id, "DeregisterRequest");
                                     });
    if (refused)
        return std::move(*refused);
    if (std::string err = a.state.catalog_deregister(node, service_id, check_id,
                                                     std::chrono::steady_clock::now());
        !err.empty())
        return text_response(500, err);
    return json_response(json::value(true));
}

http_response catalog_nodes(agent_impl& a, const http_request& req) {
    if (foreign_dc(a, req))
        return no_path_to_dc();
    json::array out;
    for (const auto& [key, n] : a.state.nodes())
        out.emplace_back(node_json(n));
    return catalog_answer(a, out);
}

http_response catalog_node(agent_impl& a, const http_request& req) {
    if (foreign_dc(a, req))
        return no_path_to_dc();
    const node_rec* n = a.state.node(path_rest(req, "/v1/catalog/node/"));
    json::value out = nullptr;
    if (n != nullptr) {
        json::object services;
        for (const auto& [id, s] : n->services)
            services[id] = service_json(s);
        json::object o;
        o["Node"] = node_json(*n);
        o["Services"] = std::move(services);
        out = std::move(o);
    }
    return catalog_answer(a, out);
}

http_response health_node(agent_impl& a, const http_request& req) {
    if (foreign_dc(a, req))
        return no_path_to_dc();
    json::array out;
    if (const node_rec* n = a.state.node(path_rest(req, "/v1/health/node/")))
        for (const auto& [id, c] : n->checks)
            out.emplace_back(check_json(c, "", true));
    return catalog_answer(a, out);
}

} // namespace conclave::dev::detail
