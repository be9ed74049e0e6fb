// SPDX-License-Identifier: BSL-1.0
// The agent's own TTL checks (Consul's agent/local state and CheckTTL): registered, updated
// and deregistered through /v1/agent/check/..., turning critical when their TTL runs out,
// and copied to the catalog, where a critical or removed check invalidates its sessions.
#include "devagent/src/agent_impl.hpp"

namespace conclave::dev::detail {

namespace {

// What the agent's sync writes to the catalog for one check of its node.
register_request sync_request(const std::string& node, const check_rec& c) {
    register_request r;
    r.node = node;
    r.skip_node_update = true;
    r.checks.push_back(c);
    return r;
}

} // namespace

std::string agent_impl::register_check(check_rec c, std::chrono::nanoseconds ttl) {
    c.node = cfg.node_name;
    auto old = agent_checks.find(c.id);
    if (c.status.empty()) {
        // Consul keeps the status (and output) of a check registered again without one.
        c.status = old != agent_checks.end() ? old->second.rec.status : "critical";
        if (old != agent_checks.end())
            c.output = old->second.rec.output;
    }
    if (!c.service_id.empty()) {
        const node_rec* n = state.node(cfg.node_name);
        if (n == nullptr || n->services.count(c.service_id) == 0)
            return "ServiceID \"" + c.service_id + "\" does not exist";
    }
    if (auto err = state.catalog_register(sync_request(cfg.node_name, c),
                                          std::chrono::steady_clock::now());
        !err.empty())
        return err;
    auto& slot = agent_checks[c.id];
    slot.rec = std::move(c);
    slot.ttl = ttl;
    arm_check_timer(slot.rec.id);
    return {};
}

bool agent_impl::update_check(const std::string& id, std::string status, std::string output,
                              bool restart_ttl) {
    auto it = agent_checks.find(id);
    if (it == agent_checks.end())
        return false;
    check_rec& c = it->second.rec;
    const bool changed = c.status != status;
    c.status = std::move(status);
    c.output = std::move(output);
    if (restart_ttl)
        arm_check_timer(id);
    if (changed)
        state.catalog_register(sync_request(cfg.node_name, c), std::chrono::steady_clock::now());
    return true;
}

void agent_impl::deregister_check(const std::string& id) {
    auto it = agent_checks.find(id);
    if (it != agent_checks.end()) {
        it->second.timer->cancel();
        agent_checks.erase(it);
    }
    state.catalog_deregister(cfg.node_name, {}, id, std::chrono::steady_clock::now());
}

void agent_impl::arm_check_timer(const std::string& id) {
    auto& slot = agent_checks.at(id);
    if (stopped)
        return;
    if (!slot.timer)
        slot.timer = std::make_unique<boost::asio::steady_timer>(ex);
    slot.timer->expires_after(slot.ttl);
    std::weak_ptr<agent_impl> weak = weak_from_this();
    // The timer is re-armed (its wait cancelled) by each update: only a wait that ran out
    // marks the check critical.
    slot.timer->async_wait([weak, id](const boost::system::error_code& ec) {
        if (ec)
            return;
        auto self = weak.lock();
        if (!self || self->stopped)
            return;
        self->update_check(id, "critical", "TTL expired", false);
    });
}

void agent_impl::clear_checks() {
    for (auto& [id, c] : agent_checks)
        if (c.timer)
            c.timer->cancel();
    agent_checks.clear();
}

} // namespace conclave::dev::detail
