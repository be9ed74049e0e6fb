// SPDX-License-Identifier: BSL-1.0
// Private endpoints under /v1/_conclave/ (not Consul APIs):
//   GET /v1/_conclave/stats                                   request counters (always on)
// and, only with enable_test_controls:
//   PUT /v1/_conclave/session/expire/<id>                     invalidate as a TTL expiry
//   PUT /v1/_conclave/inject/errors?prefix=P&count=N&status=S answer the next N requests
//                                                             under P with S (default 500)
//   PUT /v1/_conclave/inject/disconnects?prefix=P&count=N     close the next N connections
//   PUT /v1/_conclave/inject/clear                            forget pending injections
//   PUT /v1/_conclave/reset                                   empty state, index restarts
//   PUT /v1/_conclave/tombstones/reap                         drop every tombstone
#include "codec/go/strconv.hpp"
#include "devagent/src/routes/routes.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace conclave::dev::detail {

namespace json = boost::json;

namespace {

std::optional<unsigned> uint_param(const http_request& req, std::string_view name,
                                   unsigned fallback, std::string& error) {
    if (!req.query.has(name))
        return fallback;
    const auto v = codec::go::parse_uint(req.query.get(name), 10, 32);
    if (!v.value) {
        error = "invalid " + std::string(name) + ": " + v.error;
        return std::nullopt;
    }
    return static_cast<unsigned>(*v.value);
}

} // namespace

http_response controls_endpoint(agent_impl& a, const http_request& req) {
    const std::string what(path_rest(req, "/v1/_conclave/"));
    if (what == "stats") {
        if (req.method != "GET") {
            auto r = text_response(405, "method " + req.method + " not allowed");
            r.set("Allow", "OPTIONS,GET");
            return r;
        }
        json::object by;
        for (const auto& [k, v] : a.counters.by_endpoint)
            by[k] = v;
        json::object o;
        o["Requests"] = a.counters.requests;
        o["ConnectionsAccepted"] = a.counters.connections_accepted;
        o["ConnectionsOpen"] = a.counters.connections_open;
        o["ConnectionsRefused"] = a.counters.connections_refused;
        o["ConnectionsTimedOut"] = a.counters.connections_timed_out;
        o["RequestsRejected"] = a.counters.requests_rejected;
        o["InternalErrors"] = a.counters.internal_errors;
        o["BlockingQueriesWaiting"] = a.hub.size();
        o["ByEndpoint"] = std::move(by);
        o["Index"] = a.state.last_index();
        o["Keys"] = a.state.key_count();
        o["Sessions"] = a.state.session_count();
        return json_response(o);
    }
    if (req.method != "PUT") {
        auto r = text_response(405, "method " + req.method + " not allowed");
        r.set("Allow", "OPTIONS,PUT");
        return r;
    }
    if (what.rfind("session/expire/", 0) == 0) {
        const std::string id = what.substr(std::string_view("session/expire/").size());
        if (id.empty())
            return text_response(400, "Missing session");
        return json_response(json::value(a.expire_session(id)));
    }
    if (what == "inject/errors" || what == "inject/disconnects") {
        std::string error;
        const auto count = uint_param(req, "count", 1, error);
        const auto status = uint_param(req, "status", 500, error);
        if (!count || !status)
            return text_response(400, error);
        if (*status < 100 || *status > 599)
            return text_response(400, "invalid status: must be 100..599");
        injection inj;
        inj.prefix = req.query.get("prefix");
        inj.remaining = *count;
        inj.status = *status;
        inj.disconnect = what == "inject/disconnects";
        if (inj.prefix.empty())
            inj.prefix = "/v1/";
        if (inj.remaining > 0)
            a.injections.push_back(std::move(inj));
        return json_response(json::value(true));
    }
    if (what == "inject/clear") {
        a.injections.clear();
        return json_response(json::value(true));
    }
    if (what == "reset") {
        a.reset_state();
        return json_response(json::value(true));
    }
    if (what == "tombstones/reap") {
        json::object o;
        o["Reaped"] = a.state.reap_tombstones();
        return json_response(o);
    }
    return text_response(404, {});
}

} // namespace conclave::dev::detail
