// SPDX-License-Identifier: BSL-1.0
// The agent's TTL check endpoints as (build, decode) pairs: /v1/agent/check/register,
// deregister/<id> and pass|warn|fail/<id>. Sent by detail::call (consul/endpoint.hpp).
#pragma once

#include "consul/client_impl.hpp"

#include <conclave/consul/agent.hpp>

#include <string>
#include <utility>

namespace conclave::detail::endpoint {

/// The body of PUT /v1/agent/check/register for `o` (a TTL check).
std::string check_register_body(const agent_check_options& o);

/// What the check endpoints share: the agent answers 200, with no body, once it has done the
/// write (true), and an error status otherwise.
struct agent_check_write {
    using result = bool;

    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// PUT /v1/agent/check/register: true once the agent has the check.
struct agent_check_register : agent_check_write {
    explicit agent_check_register(agent_check_options options)
        : options(std::move(options)) {}

    agent_check_options options;

    error_code build(api_call& call) const;
};

/// PUT /v1/agent/check/deregister/<id>: true (also for a check the agent does not have).
struct agent_check_deregister : agent_check_write {
    agent_check_deregister(std::string id, write_options options)
        : id(std::move(id))
        , options(std::move(options)) {}

    std::string id;
    write_options options;

    error_code build(api_call& call) const;
};

/// PUT /v1/agent/check/{pass,warn,fail}/<id>[?note=]: sets a TTL check's status (and its
/// output to the note), restarting its TTL.
struct agent_check_update : agent_check_write {
    agent_check_update(std::string id, check_status status, std::string note, write_options options)
        : id(std::move(id))
        , status(status)
        , note(std::move(note))
        , options(std::move(options)) {}

    std::string id;
    check_status status;
    std::string note;
    write_options options;

    error_code build(api_call& call) const;
};

} // namespace conclave::detail::endpoint
