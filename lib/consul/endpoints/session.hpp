// SPDX-License-Identifier: BSL-1.0
// The session endpoints as (build, decode) pairs: /v1/session/{create,renew,destroy,info,
// list,node}. Sent by detail::call (consul/endpoint.hpp).
#pragma once

#include "consul/client_impl.hpp"

#include <conclave/consul/session.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace conclave::detail::endpoint {

/// The check Consul names when it refuses a session bound to a check that is critical or
/// not registered (`Check '<id>' is in critical state`, `Missing check '<id>'
/// registration`, as the leader or a server forwarding to it says): errc::check_critical.
std::optional<std::string> refused_check(std::string_view body);

/// PUT /v1/session/create: the new session's ID.
struct session_create {
    explicit session_create(session_options options)
        : options(std::move(options)) {}

    using result = std::string;
    session_options options;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// PUT /v1/session/renew/<id>: the session as renewed; a session Consul no longer has is
/// errc::session_invalidated.
struct session_renew {
    session_renew(std::string id, write_options options)
        : id(std::move(id))
        , options(std::move(options)) {}

    using result = session_entry;
    std::string id;
    write_options options;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// PUT /v1/session/destroy/<id>: whether Consul said true.
struct session_destroy {
    session_destroy(std::string id, write_options options)
        : id(std::move(id))
        , options(std::move(options)) {}

    using result = bool;
    std::string id;
    write_options options;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// GET /v1/session/info/<id>: the session, or none when Consul does not know it.
struct session_info {
    session_info(std::string id, query_options query)
        : id(std::move(id))
        , query(std::move(query)) {}

    using result = session_info_result;
    std::string id;
    query_options query;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// GET /v1/session/list, or /v1/session/node/<node> when `node` is set.
struct session_list {
    session_list(std::optional<std::string> node, query_options query)
        : node(std::move(node))
        , query(std::move(query)) {}

    using result = session_list_result;
    std::optional<std::string> node;
    query_options query;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// The JSON body of a session create.
std::string session_create_body(const session_options& o);

} // namespace conclave::detail::endpoint
