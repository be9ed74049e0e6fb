// SPDX-License-Identifier: BSL-1.0
// Request routing: Go's ServeMux (path cleaning and trailing-slash redirects, longest
// pattern wins, "/" catches the rest) and Consul's handler wrapper (OPTIONS, 405 with Allow),
// plus the test controls' injections and the request counters.
#include "devagent/src/routes/routes.hpp"

#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <array>
#include <cstdint>

namespace conclave::dev::detail {

namespace asio = boost::asio;

namespace {

enum class route_id {
    kv,
    session_create,
    session_destroy,
    session_renew,
    session_info,
    session_node,
    session_list,
    txn,
    status_leader,
    status_peers,
    agent_self,
    catalog_register,
    catalog_deregister,
    catalog_nodes,
    catalog_node,
    health_node,
    agent_check_register,
    agent_check_deregister,
    agent_check_set,
    agent_check_update,
    agent_checks,
    controls,
};

struct route {
    std::string_view pattern; ///< ending in '/': a subtree; otherwise an exact path
    std::string_view methods; ///< comma-separated, as in the Allow header
    route_id id;
};

constexpr std::array<route, 24> routes{{
    {"/v1/kv/", "GET,PUT,DELETE", route_id::kv},
    {"/v1/session/create", "PUT", route_id::session_create},
    {"/v1/session/destroy/", "PUT", route_id::session_destroy},
    {"/v1/session/renew/", "PUT", route_id::session_renew},
    {"/v1/session/info/", "GET", route_id::session_info},
    {"/v1/session/node/", "GET", route_id::session_node},
    {"/v1/session/list", "GET", route_id::session_list},
    {"/v1/txn", "PUT", route_id::txn},
    {"/v1/status/leader", "GET", route_id::status_leader},
    {"/v1/status/peers", "GET", route_id::status_peers},
    {"/v1/agent/self", "GET", route_id::agent_self},
    {"/v1/catalog/register", "PUT", route_id::catalog_register},
    {"/v1/catalog/deregister", "PUT", route_id::catalog_deregister},
    {"/v1/catalog/nodes", "GET", route_id::catalog_nodes},
    {"/v1/catalog/node/", "GET", route_id::catalog_node},
    {"/v1/health/node/", "GET", route_id::health_node},
    {"/v1/agent/check/register", "PUT", route_id::agent_check_register},
    {"/v1/agent/check/deregister/", "PUT", route_id::agent_check_deregister},
    {"/v1/agent/check/pass/", "PUT", route_id::agent_check_set},
    {"/v1/agent/check/warn/", "PUT", route_id::agent_check_set},
    {"/v1/agent/check/fail/", "PUT", route_id::agent_check_set},
    {"/v1/agent/check/update/", "PUT", route_id::agent_check_update},
    {"/v1/agent/checks", "GET", route_id::agent_checks},
    {"/v1/_conclave/", "GET,PUT", route_id::controls},
}};

const route* find_route(std::string_view path) {
    const route* best = nullptr;
    for (const auto& r : routes) {
        if (r.pattern.back() == '/') {
            if (path.starts_with(r.pattern) &&
                (best == nullptr || r.pattern.size() > best->pattern.size()))
                best = &r;
        } else if (path == r.pattern) {
            return &r;
        }
    }
    return best;
}

// Whether path + "/" is a route pattern (without building that string).
bool is_pattern_with_slash(std::string_view path) {
    for (const auto& r : routes)
        if (r.pattern.size() == path.size() + 1 && r.pattern.back() == '/' &&
            r.pattern.starts_with(path))
            return true;
    return false;
}

bool method_allowed(std::string_view methods, std::string_view method) {
    while (!methods.empty()) {
        const auto comma = methods.find(',');
        if (methods.substr(0, comma) == method)
            return true;
        if (comma == std::string_view::npos)
            break;
        methods.remove_prefix(comma + 1);
    }
    return false;
}

std::string html_escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&#34;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

// net/http.Redirect with 301.
http_response redirect(const http_request& req, const std::string& path) {
    std::string url = path_escape(path);
    if (!req.raw_query.empty())
        url += "?" + req.raw_query;
    http_response r;
    r.status = 301;
    r.set("Location", url);
    if (req.method == "GET" || req.method == "HEAD")
        r.set("Content-Type", "text/html; charset=utf-8");
    if (req.method == "GET")
        r.body = "<a href=\"" + html_escape(url) + "\">Moved Permanently</a>.\n\n";
    return r;
}

// Counts a request under "METHOD /pattern" ("METHOD other" without a route). The name is
// built in a buffer the agent keeps, so only a first request of its kind allocates.
void count_endpoint(agent_impl& a, const http_request& req, const route* r) {
    std::string& name = a.endpoint_scratch;
    name.assign(req.method);
    name += ' ';
    if (r == nullptr) {
        name += "other";
    } else {
        std::string_view p = r->pattern;
        if (p.size() > 1 && p.back() == '/')
            p.remove_suffix(1);
        name += p;
    }
    ++a.counters.by_endpoint[name];
}

using wait_handler = asio::awaitable<http_response> (*)(agent_impl&, const http_request&,
                                                        disconnect_probe*);

// The handlers that may wait (blocking queries), which dispatch_wait() runs; nullptr for the
// others. kv answers most of its requests without waiting first (kv_endpoint_now).
wait_handler waiting_handler(route_id id) {
    switch (id) {
    case route_id::kv:
        return kv_endpoint_wait;
    case route_id::session_info:
        return session_info;
    case route_id::session_node:
        return session_node;
    case route_id::session_list:
        return session_list;
    default:
        return nullptr;
    }
}

// The handlers that answer without waiting. A plain function, not a coroutine: each nested
// coroutine frame is a heap allocation once Asio's two-frame cache is full.
http_response call_sync(agent_impl& a, const route& r, const http_request& req) {
    switch (r.id) {
    case route_id::kv:
    case route_id::session_info:
    case route_id::session_node:
    case route_id::session_list:
        break; // they wait: waiting_handler()
    case route_id::session_create:
        return session_create(a, req);
    case route_id::session_destroy:
        return session_destroy(a, req);
    case route_id::session_renew:
        return session_renew(a, req);
    case route_id::txn:
        return txn_endpoint(a, req);
    case route_id::status_leader:
        return status_leader(a, req);
    case route_id::status_peers:
        return status_peers(a, req);
    case route_id::agent_self:
        return agent_self(a, req);
    case route_id::catalog_register:
        return catalog_register(a, req);
    case route_id::catalog_deregister:
        return catalog_deregister(a, req);
    case route_id::catalog_nodes:
        return catalog_nodes(a, req);
    case route_id::catalog_node:
        return catalog_node(a, req);
    case route_id::health_node:
        return health_node(a, req);
    case route_id::agent_check_register:
        return agent_check_register(a, req);
    case route_id::agent_check_deregister:
        return agent_check_deregister(a, req);
    case route_id::agent_check_set:
        return agent_check_set(a, req);
    case route_id::agent_check_update:
        return agent_check_update(a, req);
    case route_id::agent_checks:
        return agent_checks(a, req);
    case route_id::controls:
        return controls_endpoint(a, req);
    }
    return text_response(404, {});
}

} // namespace

std::int64_t body_limit(const agent_config& cfg, const http_request& req) {
    const auto clamp = [](std::size_t n) {
        return static_cast<std::int64_t>(std::min<std::size_t>(n, INT64_MAX));
    };
    constexpr std::int64_t txn_max_req_len = 524288; // Consul's default
    const std::int64_t kv = clamp(cfg.kv_max_value_size);
    if (req.method == "PUT" && req.path.starts_with("/v1/kv/"))
        return kv;
    if (req.method == "PUT" && req.path == "/v1/txn")
        return std::max(txn_max_req_len, kv);
    return clamp(cfg.max_body_bytes);
}

std::optional<http_response> dispatch_now(agent_impl& a, const http_request& req) {
    ++a.counters.requests;

    if (!req.path.starts_with("/v1/_conclave/")) {
        if (const injection* inj = a.take_injection(req.path)) {
            ++a.counters.by_endpoint[req.method + " (injected)"];
            http_response r;
            if (inj->disconnect) {
                r.drop = true;
                return r;
            }
            r = text_response(inj->status,
                              inj->status == 500 ? "No cluster leader" : "injected error");
            return r;
        }
    }

    // Go's ServeMux: redirect to the cleaned path, or to the subtree pattern with a '/'.
    std::string cleaned_copy;
    std::string_view cleaned = req.path;
    if (!path_is_clean(req.path)) {
        cleaned_copy = clean_path(req.path);
        cleaned = cleaned_copy;
    }
    const route* r = find_route(cleaned);
    if ((r == nullptr || r->pattern != cleaned) && is_pattern_with_slash(cleaned) &&
        cleaned.back() != '/') {
        count_endpoint(a, req, nullptr);
        return redirect(req, std::string(cleaned) + "/");
    }
    if (cleaned != req.path) {
        count_endpoint(a, req, nullptr);
        return redirect(req, std::string(cleaned));
    }
    count_endpoint(a, req, r);

    http_response resp;
    if (r == nullptr || (r->id == route_id::controls && !a.cfg.enable_test_controls &&
                         req.path != "/v1/_conclave/stats")) {
        // Consul's "/" handler: the UI redirect for "/", an empty 404 for anything else.
        if (req.path == "/")
            return redirect(req, "/ui/");
        return text_response(404, {});
    }
    if (req.method == "OPTIONS") {
        resp.set("Allow", "OPTIONS," + std::string(r->methods));
    } else if (!method_allowed(r->methods, req.method)) {
        resp = text_response(405, "method " + req.method + " not allowed");
        resp.set("Allow", "OPTIONS," + std::string(r->methods));
    } else {
        try {
            if (r->id == route_id::kv) {
                auto now = kv_endpoint_now(a, req);
                if (!now)
                    return std::nullopt;
                resp = std::move(*now);
            } else if (waiting_handler(r->id) != nullptr) {
                return std::nullopt;
            } else {
                resp = call_sync(a, *r, req);
            }
        } catch (const std::exception& e) {
            resp = text_response(500, e.what());
        }
    }
    resp.set("Vary", "Accept-Encoding");
    return resp;
}

asio::awaitable<http_response> dispatch_wait(std::shared_ptr<agent_impl> agent, http_request req,
                                             disconnect_probe* probe) {
    agent_impl& a = *agent;
    // dispatch_now found this route on this very path (already clean) and counted it.
    const route* r = find_route(req.path);
    http_response resp;
    try {
        if (const wait_handler handler = waiting_handler(r->id))
            resp = co_await handler(a, req, probe);
        else
            resp = call_sync(a, *r, req);
    } catch (const std::exception& e) {
        resp = text_response(500, e.what());
    }
    resp.set("Vary", "Accept-Encoding");
    co_return resp;
}

asio::awaitable<http_response> dispatch(std::shared_ptr<agent_impl> agent, http_request req,
                                        disconnect_probe* probe) {
    if (auto now = dispatch_now(*agent, req))
        co_return std::move(*now);
    co_return co_await dispatch_wait(std::move(agent), std::move(req), probe);
}

} // namespace conclave::dev::detail
