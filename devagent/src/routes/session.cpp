// SPDX-License-Identifier: BSL-1.0
// /v1/session/...: agent/session_endpoint.go (HTTP, body decoding through
// structs.Session.UnmarshalJSON) + agent/consul/session_endpoint.go (RPC validation).
#include "codec/go/duration.hpp"
#include "codec/go/strconv.hpp"
#include "devagent/src/go/gojson.hpp"
#include "devagent/src/go/goutil.hpp"
#include "devagent/src/routes/routes.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>

namespace conclave::dev::detail {

namespace asio = boost::asio;
namespace json = boost::json;
using gojson::kind;

namespace {

constexpr std::chrono::hours session_ttl_max{24};

// The fields of structs.Session as its UnmarshalJSON sees them (defaults pre-filled).
struct session_body {
    std::string name;
    std::string node;
    std::string behavior = "release";
    std::string ttl;
    std::optional<std::vector<std::string>> node_checks;
    std::optional<std::vector<std::string>> checks;
    std::optional<std::vector<service_check>> service_checks;
    std::int64_t lock_delay = 15'000'000'000;
};

void decode_string(const gojson::value& v, std::string& out, std::string_view st,
                   std::string_view path, std::string_view type, gojson::first_error& errs) {
    if (v.is_null())
        return;
    if (v.k == kind::string)
        out = v.text;
    else
        errs.save(gojson::type_error(gojson::describe(v), st, path, type));
}

void decode_uint(const gojson::value& v, std::string_view st, std::string_view path,
                 gojson::first_error& errs) {
    if (v.is_null())
        return;
    if (v.k == kind::number) {
        if (!codec::go::parse_uint(v.text).value)
            errs.save(gojson::type_error("number " + v.text, st, path, "uint64"));
        return;
    }
    errs.save(gojson::type_error(gojson::describe(v), st, path, "uint64"));
}

void decode_strings(const gojson::value& v, std::optional<std::vector<std::string>>& out,
                    std::string_view path, std::string_view slice_type, std::string_view elem_type,
                    gojson::first_error& errs) {
    if (v.is_null()) {
        out.reset();
        return;
    }
    if (v.k != kind::array) {
        errs.save(gojson::type_error(gojson::describe(v), "", path, slice_type));
        return;
    }
    std::vector<std::string> list;
    for (const auto& item : v.items) {
        std::string s;
        decode_string(item, s, "", path, elem_type, errs);
        list.push_back(std::move(s));
    }
    out = std::move(list);
}

void decode_service_checks(const gojson::value& v, std::optional<std::vector<service_check>>& out,
                           gojson::first_error& errs) {
    if (v.is_null()) {
        out.reset();
        return;
    }
    if (v.k != kind::array) {
        errs.save(
            gojson::type_error(gojson::describe(v), "", "ServiceChecks", "[]structs.ServiceCheck"));
        return;
    }
    std::vector<service_check> list;
    for (const auto& item : v.items) {
        service_check c;
        if (item.k == kind::object) {
            for (const auto& [key, field] : item.members) {
                if (boost::beast::iequals(key, "ID"))
                    decode_string(field, c.id, "ServiceCheck", "ServiceChecks.ID", "string", errs);
                else if (boost::beast::iequals(key, "Namespace"))
                    decode_string(field, c.ns, "ServiceCheck", "ServiceChecks.Namespace", "string",
                                  errs);
            }
        } else if (!item.is_null()) {
            errs.save(gojson::type_error(gojson::describe(item), "", "ServiceChecks",
                                         "structs.ServiceCheck"));
        }
        list.push_back(std::move(c));
    }
    out = std::move(list);
}

// Go's time.Duration(float64) on amd64: truncation, and INT64_MIN when out of range.
std::int64_t float_to_duration(double d) {
    if (!(d > -9.2233720368547758e18 && d < 9.2233720368547758e18))
        return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(d);
}

std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

// structs.Session.UnmarshalJSON; returns the error text (empty on success).
std::string decode_session(const gojson::value& v, session_body& s) {
    if (v.is_null())
        return {};
    if (v.k != kind::object)
        return gojson::type_error(gojson::describe(v), "", "",
                                  "struct { LockDelay interface {}; *structs.Alias }");
    gojson::first_error errs;
    const gojson::value* lock_delay = nullptr;
    bool lock_delay_set = false;
    std::string ignored;
    for (const auto& [key, field] : v.members) {
        // Exact names first, then encoding/json's case-insensitive match.
        static constexpr std::string_view names[] = {
            "LockDelay", "ID",       "Name", "Node",        "NodeChecks", "ServiceChecks",
            "Checks",    "Behavior", "TTL",  "CreateIndex", "ModifyIndex"};
        std::string_view name;
        for (const auto n : names)
            if (key == n)
                name = n;
        if (name.empty())
            for (const auto n : names)
                if (name.empty() && boost::beast::iequals(key, n))
                    name = n;
        if (name == "LockDelay") {
            lock_delay = field.is_null() ? nullptr : &field;
            lock_delay_set = true;
            if (field.k == kind::number && std::isinf(std::strtod(field.text.c_str(), nullptr)))
                errs.save(gojson::type_error("number " + field.text, "", "LockDelay", "float64"));
        } else if (name == "ID") {
            decode_string(field, ignored, "", "ID", "string", errs);
        } else if (name == "Name") {
            decode_string(field, s.name, "", "Name", "string", errs);
        } else if (name == "Node") {
            decode_string(field, s.node, "", "Node", "string", errs);
        } else if (name == "NodeChecks") {
            decode_strings(field, s.node_checks, "NodeChecks", "[]string", "string", errs);
        } else if (name == "ServiceChecks") {
            decode_service_checks(field, s.service_checks, errs);
        } else if (name == "Checks") {
            decode_strings(field, s.checks, "Checks", "[]types.CheckID", "types.CheckID", errs);
        } else if (name == "Behavior") {
            decode_string(field, s.behavior, "", "Behavior", "structs.SessionBehavior", errs);
        } else if (name == "TTL") {
            decode_string(field, s.ttl, "", "TTL", "string", errs);
        } else if (name == "CreateIndex" || name == "ModifyIndex") {
            decode_uint(field, "", name, errs);
        }
    }
    std::int64_t dur = 0;
    if (lock_delay != nullptr && lock_delay->k == kind::number)
        dur = float_to_duration(std::strtod(lock_delay->text.c_str(), nullptr));
    if (!errs.get().empty())
        return errs.get();
    if (lock_delay_set && lock_delay != nullptr) {
        if (lock_delay->k == kind::string) {
            const auto parsed = codec::go::parse_duration(lock_delay->text);
            if (!parsed.value)
                return parsed.error;
            dur = parsed.value->count();
        } else if (lock_delay->k != kind::number) {
            dur = 0;
        }
        if (dur < 1000)
            dur = wrap_mul(dur, 1'000'000'000);
        s.lock_delay = dur;
    }
    return {};
}

bool ttl_is_zero_text(std::string_view ttl) {
    return ttl.empty() || ttl == "0" || ttl == "0s" || ttl == "0m" || ttl == "0h";
}

http_response session_list_response(const std::vector<session_rec>& list, std::uint64_t index) {
    json::array a;
    a.reserve(list.size());
    for (const auto& s : list)
        a.emplace_back(session_json(s));
    http_response r = json_response(std::move(a));
    set_meta(r, index);
    return r;
}

http_response session_read_error(const std::string& error) {
    http_response r = text_response(500, error);
    set_meta(r, 1, false);
    return r;
}

// A blocking read of a list of sessions, answered as Consul answers it: `read(ws)` is the
// store's read (its sessions and index), run again on each change until opts' wait ends.
template <class Read>
asio::awaitable<http_response> blocking_sessions(agent_impl& a, disconnect_probe* probe,
                                                 const query_opts& opts, Read read) {
    std::vector<session_rec> found;
    const query_eval eval = [&](watch_set* ws) -> std::uint64_t {
        found.clear();
        const auto r = read(ws);
        for (const session_rec* s : r.sessions)
            found.push_back(*s);
        return r.index;
    };
    const std::uint64_t index = co_await run_blocking(a.hub, a.rng, probe, opts, eval);
    co_return session_list_response(found, index);
}

// What a session read takes from its request: its query options and the name in its path
// (a view into the request, which outlives the wait), or the answer that refuses it.
struct read_request {
    query_opts opts;
    std::string_view name;
    std::optional<http_response> refused;
};

// A session read's checks before it waits, in Consul's order: its query options (a 400 when
// they do not parse), a namespace, the name in the path after `prefix` (`missing` when there
// is none; list, without a prefix, names nothing), then another datacenter, answered as a
// read's 500.
read_request read_checks(agent_impl& a, const http_request& req, std::string_view prefix = {},
                         std::string_view missing = {}) {
    read_request r;
    const query_opts_parse qp = parse_query_opts(req.query);
    if (!qp.error.empty()) {
        r.refused = text_response(400, qp.error);
        return r;
    }
    r.opts = qp.opts;
    r.refused = namespace_refused(req);
    if (r.refused)
        return r;
    if (!prefix.empty()) {
        r.name = path_rest(req, prefix);
        if (r.name.empty()) {
            r.refused = text_response(400, std::string(missing));
            return r;
        }
    }
    if (foreign_dc(a, req))
        r.refused = session_read_error("No path to datacenter");
    return r;
}

// destroy's and renew's checks of the session they act on, in Consul's order: a namespace,
// the id in the path after `prefix`, then another datacenter. Sets `id`; returns the answer
// that refuses the request, if any.
std::optional<http_response> session_id_refused(agent_impl& a, const http_request& req,
                                                std::string_view prefix, std::string& id) {
    if (auto refused = namespace_refused(req))
        return refused;
    id = path_rest(req, prefix);
    if (id.empty())
        return text_response(400, "Missing session");
    if (foreign_dc(a, req))
        return no_path_to_dc();
    return std::nullopt;
}

} // namespace

http_response session_create(agent_impl& a, const http_request& req) {
    if (auto refused = namespace_refused(req))
        return std::move(*refused);
    session_body b;
    b.node = a.cfg.node_name;
    b.node_checks = std::vector<std::string>{"serfHealth"};
    b.checks = std::vector<std::string>{"serfHealth"};
    if (req.content_length > 0) { // (a chunked body is not read)
        gojson::value body;
        if (auto refused = decode_body(req, body))
            return std::move(*refused);
        if (std::string error = decode_session(body, b); !error.empty())
            return text_response(400, "Request decode failed: " + error);
    }
    // fixupEmptySessionChecks
    if (b.checks && b.checks->empty())
        b.node_checks = std::vector<std::string>{};
    if (b.checks && b.checks->size() == 1 && b.checks->front() == "serfHealth")
        b.checks.reset();

    if (foreign_dc(a, req))
        return no_path_to_dc();
    // Session.Apply's checks before Raft.
    if (b.node.empty())
        return text_response(500, "Must provide Node");
    if (b.behavior.empty())
        b.behavior = "release";
    if (b.behavior != "release" && b.behavior != "delete")
        return text_response(500, "Invalid Behavior setting '" + b.behavior + "'");
    std::chrono::nanoseconds ttl{0};
    if (!b.ttl.empty()) {
        const auto parsed = codec::go::parse_duration(b.ttl);
        if (!parsed.value)
            return text_response(500, "Session TTL '" + b.ttl + "' invalid: " + parsed.error);
        ttl = *parsed.value;
        const auto min = std::chrono::nanoseconds(a.cfg.session_ttl_min);
        if (ttl.count() != 0 && (ttl < min || ttl > session_ttl_max))
            return text_response(500, "Invalid Session TTL '" + std::to_string(ttl.count()) +
                                          "', must be between [" + codec::go::format_duration(min) +
                                          "=" + codec::go::format_duration(session_ttl_max) + "]");
    }

    session_rec s;
    s.id = a.new_uuid();
    s.key = *memdb_uuid(s.id).bytes;
    s.name = std::move(b.name);
    s.node = std::move(b.node);
    s.lock_delay_ns = b.lock_delay;
    s.behavior = std::move(b.behavior);
    s.ttl = b.ttl;
    s.node_checks = std::move(b.node_checks);
    s.service_checks = std::move(b.service_checks);
    if (b.checks)
        s.checks = std::move(*b.checks);
    const std::string id = s.id;
    if (std::string err = a.state.session_create(std::move(s)); !err.empty())
        return text_response(500, err);
    if (!ttl_is_zero_text(b.ttl) && ttl.count() != 0)
        a.arm_session_timer(id, ttl);
    return json_response(json::object{{"ID", id}});
}

http_response session_destroy(agent_impl& a, const http_request& req) {
    std::string id;
    if (auto refused = session_id_refused(a, req, "/v1/session/destroy/", id))
        return std::move(*refused);
    if (std::string err = a.state.session_destroy(id, std::chrono::steady_clock::now());
        !err.empty())
        return text_response(500, err);
    a.clear_session_timer(id);
    return json_response(json::value(true));
}

http_response session_renew(agent_impl& a, const http_request& req) {
    // Consul parses the query options here too (an index or consistency mode goes unused).
    if (const query_opts_parse qp = parse_query_opts(req.query); !qp.error.empty())
        return text_response(400, qp.error);
    std::string id;
    if (auto refused = session_id_refused(a, req, "/v1/session/renew/", id))
        return std::move(*refused);
    const auto r = a.state.session_get(id, nullptr);
    if (!r.error.empty())
        return text_response(500, r.error);
    if (r.session == nullptr)
        return text_response(404, "Session id '" + id + "' not found");
    const session_rec s = *r.session;
    if (!ttl_is_zero_text(s.ttl)) {
        const auto parsed = codec::go::parse_duration(s.ttl);
        if (!parsed.value)
            return text_response(500, "Invalid Session TTL '" + s.ttl + "': " + parsed.error);
        if (parsed.value->count() != 0)
            a.arm_session_timer(s.id, *parsed.value);
    }
    return json_response(json::array{session_json(s)});
}

asio::awaitable<http_response> session_info(agent_impl& a, const http_request& req,
                                            disconnect_probe* probe) {
    read_request r = read_checks(a, req, "/v1/session/info/", "Missing session");
    if (r.refused)
        co_return std::move(*r.refused);
    const std::string_view id = r.name;
    std::vector<session_rec> found;
    std::string error;
    const query_eval eval = [&](watch_set* ws) -> std::uint64_t {
        found.clear();
        const auto r = a.state.session_get(id, ws);
        if (!r.error.empty()) {
            error = r.error;
            return std::numeric_limits<std::uint64_t>::max();
        }
        if (r.session)
            found.push_back(*r.session);
        return r.index;
    };
    const std::uint64_t index = co_await run_blocking(a.hub, a.rng, probe, r.opts, eval);
    if (!error.empty())
        co_return session_read_error(error);
    co_return session_list_response(found, index);
}

asio::awaitable<http_response> session_list(agent_impl& a, const http_request& req,
                                            disconnect_probe* probe) {
    read_request r = read_checks(a, req);
    if (r.refused)
        co_return std::move(*r.refused);
    co_return co_await blocking_sessions(a, probe, r.opts,
                                         [&](watch_set* ws) { return a.state.session_list(ws); });
}

asio::awaitable<http_response> session_node(agent_impl& a, const http_request& req,
                                            disconnect_probe* probe) {
    read_request r = read_checks(a, req, "/v1/session/node/", "Missing node name");
    if (r.refused)
        co_return std::move(*r.refused);
    const std::string_view node = r.name;
    co_return co_await blocking_sessions(
        a, probe, r.opts, [&](watch_set* ws) { return a.state.node_sessions(node, ws); });
}

} // namespace conclave::dev::detail
