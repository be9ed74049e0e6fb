// SPDX-License-Identifier: BSL-1.0
/// \file
/// What the agent says about itself (/v1/agent/self), and the TTL health checks registered
/// on it (/v1/agent/check/...).
#pragma once

#include <conclave/consul/request.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <utility>

namespace conclave {

/// Part of /v1/agent/self.
struct agent_info {
    std::string node_name;  ///< the agent's node
    std::string datacenter; ///< its datacenter
    std::string version;    ///< its Consul version
};

/// A health check's state. Consul invalidates the sessions bound to a check when it turns
/// critical (or is deregistered); warning does not.
enum class check_status {
    passing,
    warning,
    critical,
};

/// A TTL check to register on the agent the client talks to (`PUT
/// /v1/agent/check/register`): it turns critical unless it is updated (passed) at least every
/// `ttl`. Not an aggregate (see conclave/consul/request.hpp): set fields with the with_* calls.
struct agent_check_options : request_options<agent_check_options> {
    agent_check_options() = default;

    std::string id;                   ///< the check's ID (empty: Consul uses the name)
    std::string name;                 ///< required
    std::string service_id;           ///< a service of the agent (empty: a node check)
    std::chrono::milliseconds ttl{0}; ///< required, positive
    /// Its status once registered. Empty: critical for a new check (Consul's default), the
    /// status it had for one registered again.
    std::optional<check_status> status;
    std::string notes; ///< free text shown with the check
    /// Bounds this request, when shorter than the client's request_timeout. 0: that one.
    std::chrono::milliseconds timeout{0};

    agent_check_options& with_id(std::string v) { return set(id, std::move(v)); }
    agent_check_options& with_name(std::string v) { return set(name, std::move(v)); }
    agent_check_options& with_service_id(std::string v) { return set(service_id, std::move(v)); }
    agent_check_options& with_ttl(std::chrono::milliseconds v) { return set(ttl, v); }
    agent_check_options& with_status(check_status v) { return set(status, v); }
    agent_check_options& with_notes(std::string v) { return set(notes, std::move(v)); }
    agent_check_options& with_timeout(std::chrono::milliseconds v) { return set(timeout, v); }
};

} // namespace conclave
