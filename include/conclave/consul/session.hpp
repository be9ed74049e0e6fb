// SPDX-License-Identifier: BSL-1.0
/// \file
/// Consul's sessions as the session endpoints see them: creation options and the entries
/// Consul reports. (The session recipe, which keeps one alive, is conclave/session.hpp.)
#pragma once

#include <conclave/consul/request.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace conclave {

/// What Consul does to the keys a session holds when the session is invalidated.
enum class session_behavior {
    release,     ///< on invalidation, held keys are unlocked (Consul's default)
    delete_keys, ///< on invalidation, held keys are deleted ("delete")
};

/// A service health check a session is bound to (Consul's ServiceChecks).
struct service_check {
    std::string id; ///< the check's ID
    std::string ns; ///< Enterprise namespace (empty otherwise)
    bool operator==(const service_check&) const = default;
};

/// Creation parameters of a session. Not an aggregate (see conclave/consul/request.hpp):
/// set fields with the with_* calls.
struct session_options : request_options<session_options> {
    session_options() = default;

    std::string name;                 ///< shown in session lists (empty: none)
    std::string node;                 ///< empty: the agent's node
    std::chrono::milliseconds ttl{0}; ///< 0: no TTL
    /// Lock-delay. Empty: Consul's default (15 s). An explicit 0 disables it and is sent.
    std::optional<std::chrono::milliseconds> lock_delay;
    session_behavior behavior = session_behavior::release; ///< what invalidation does to keys
    /// Node health checks. Empty optional: Consul's default (serfHealth). An empty
    /// vector: no node checks at all (the session lives by TTL or explicit destroy).
    std::optional<std::vector<std::string>> node_checks;
    std::vector<service_check> service_checks; ///< service checks (empty: none)

    session_options& with_name(std::string v) { return set(name, std::move(v)); }
    session_options& with_node(std::string v) { return set(node, std::move(v)); }
    session_options& with_ttl(std::chrono::milliseconds v) { return set(ttl, v); }
    session_options& with_lock_delay(std::chrono::milliseconds v) { return set(lock_delay, v); }
    session_options& with_behavior(session_behavior v) { return set(behavior, v); }
    session_options& with_node_checks(std::vector<std::string> v) {
        return set(node_checks, std::move(v));
    }
    /// No node checks: the session is bound to nothing but its TTL (or explicit destroy).
    session_options& without_node_checks() {
        node_checks.emplace();
        return *this;
    }
    session_options& with_service_checks(std::vector<service_check> v) {
        return set(service_checks, std::move(v));
    }
};

/// A session as Consul reports it.
struct session_entry {
    std::string id;                                        ///< the session's ID
    std::string name;                                      ///< its name
    std::string node;                                      ///< the node it belongs to
    std::chrono::nanoseconds lock_delay{0};                ///< its lock-delay
    session_behavior behavior = session_behavior::release; ///< release or delete_keys
    std::string ttl_text;                      ///< "TTL" exactly as stored ("" when none)
    std::chrono::nanoseconds ttl{0};           ///< ttl_text parsed
    std::vector<std::string> node_checks;      ///< the node checks it is bound to
    std::vector<service_check> service_checks; ///< the service checks it is bound to
    std::uint64_t create_index = 0;            ///< Raft index of its creation
    std::uint64_t modify_index = 0;            ///< Raft index of its last change
};

/// What client::async_session_info completes with.
struct session_info_result {
    std::optional<session_entry> session; ///< empty when unknown (Consul answers [])
    query_meta meta;                      ///< the read's index (to block on) and leader state
};

/// What client::async_session_list and client::async_session_node complete with.
struct session_list_result {
    std::vector<session_entry> sessions; ///< every session (of the node)
    query_meta meta;                     ///< the read's index (to block on) and leader state
};

} // namespace conclave
