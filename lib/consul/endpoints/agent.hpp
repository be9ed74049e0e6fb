// SPDX-License-Identifier: BSL-1.0
// /v1/txn, /v1/status/leader and /v1/agent/self as (build, decode) pairs. Sent by
// detail::call (consul/endpoint.hpp).
#pragma once

#include "consul/client_impl.hpp"

#include <conclave/consul/agent.hpp>
#include <conclave/consul/txn.hpp>

#include <string>
#include <utility>
#include <vector>

namespace conclave::detail::endpoint {

/// PUT /v1/txn: committed (200) or rolled back (409), with each op's result or error.
struct txn {
    txn(std::vector<txn_op> ops, txn_options options)
        : ops(std::move(ops))
        , options(std::move(options)) {}

    using result = txn_result;
    std::vector<txn_op> ops;
    txn_options options;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// GET /v1/status/leader: the leader's address ("" while there is none).
struct status_leader {
    explicit status_leader(write_options options)
        : options(std::move(options)) {}

    using result = std::string;
    write_options options;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// GET /v1/agent/self: the agent's node name, datacenter and version.
struct agent_self {
    explicit agent_self(write_options options)
        : options(std::move(options)) {}

    using result = agent_info;
    write_options options;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

} // namespace conclave::detail::endpoint
