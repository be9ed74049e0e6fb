// SPDX-License-Identifier: BSL-1.0
#include "consul/client_impl.hpp"

#include <boost/url/pct_string_view.hpp>

namespace conclave::detail {

namespace {

bool has_flag(const api_call& call, std::string_view name) {
    for (const auto& [n, v] : call.params)
        if (n == name)
            return true;
    return false;
}

// The key of a /v1/kv/ path, as the user wrote it.
std::string kv_key(std::string_view encoded) {
    auto pct = boost::urls::make_pct_string_view(encoded);
    return pct ? std::string(pct->decode()) : std::string(encoded);
}

} // namespace

std::string missing_permission(const api_call& call, std::string_view server_text,
                               bool token_sent) {
    // "ACL not found": the token itself is unknown, whatever the request.
    if (server_text.find("ACL not found") != std::string_view::npos)
        return "Consul does not know the ACL token sent (wrong, or deleted)";
    const bool get = call.method == boost::beast::http::verb::get;
    const std::string_view path = call.path;
    std::string need;
    if (path.starts_with("/v1/kv/")) {
        const auto key = kv_key(path.substr(7));
        const bool prefix = has_flag(call, "recurse") || has_flag(call, "keys");
        need = std::string(prefix ? "key_prefix" : "key") + (get ? " read" : " write") + " on \"" +
               key + "\"";
    } else if (path.starts_with("/v1/txn")) {
        need = "key write (read, for reads) on the transaction's keys";
    } else if (path.starts_with("/v1/session/create")) {
        need = "session write on the agent's node";
    } else if (path.starts_with("/v1/session/renew/") || path.starts_with("/v1/session/destroy/")) {
        need = "session write on the session's node";
    } else if (path.starts_with("/v1/session/")) {
        need = "session read";
    } else if (path.starts_with("/v1/agent/")) {
        need = "agent read";
    } else {
        need = "the permission " + call.path + " requires";
    }
    std::string out = "the ACL token lacks " + need;
    if (!token_sent)
        out += " (no token was sent: set CONSUL_HTTP_TOKEN or client_config::token)";
    return out;
}

} // namespace conclave::detail
