// SPDX-License-Identifier: BSL-1.0
// Sessions, the catalog they are bound to, and the store's control operations.
#include "devagent/src/go/goutil.hpp"
#include "devagent/src/store/state.hpp"

#include <boost/beast/core/string.hpp>

#include <algorithm>

namespace conclave::dev::detail {

std::vector<std::string> session_rec::check_ids() const {
    std::vector<std::string> ids = checks;
    if (node_checks)
        ids.insert(ids.end(), node_checks->begin(), node_checks->end());
    if (service_checks)
        for (const auto& c : *service_checks)
            ids.push_back(c.id);
    return ids;
}

std::string store::node_key(std::string_view node, std::string_view session_key) {
    std::string k = ascii_lower(node);
    k += '\0';
    k.append(session_key);
    return k;
}

void store::bootstrap() {
    const std::uint64_t idx = next_index();
    node_rec n;
    n.name = node_name_;
    n.address = "127.0.0.1";
    n.datacenter = datacenter_;
    n.create_index = n.modify_index = idx;
    check_rec serf;
    serf.node = node_name_;
    serf.id = "serfHealth";
    serf.name = "Serf Health Status";
    serf.status = "passing";
    serf.output = "Agent alive and reachable";
    serf.create_index = serf.modify_index = idx;
    n.checks.emplace(serf.id, serf);
    nodes_.emplace(ascii_lower(node_name_), std::move(n));
    tables_.nodes = tables_.checks = idx;
}

void store::reset() {
    kv_tree_.clear();
    session_tree_.clear();
    session_node_tree_.clear();
    kvs_.clear();
    tombstones_.clear();
    lock_delays_.clear();
    held_.clear();
    std::vector<std::string> ids;
    for (const auto& [key, s] : sessions_)
        ids.push_back(s.id);
    sessions_.clear();
    nodes_.clear();
    index_ = 0;
    tables_ = {};
    bootstrap();
    publish();
    if (on_session_destroyed)
        for (const auto& id : ids)
            on_session_destroyed(id);
}

std::size_t store::reap_tombstones() {
    const std::size_t n = tombstones_.size();
    tombstones_.clear();
    return n;
}

// ---- sessions --------------------------------------------------------------------------------

const session_rec* store::find_session(std::string_view id, std::string& error) const {
    // Every lock looks its session up: the usual ID's key without an allocation.
    char raw[16];
    if (canonical_uuid_key(id, raw)) {
        auto it = sessions_.find(std::string_view(raw, sizeof raw));
        return it == sessions_.end() ? nullptr : &it->second;
    }
    const parsed_uuid key = memdb_uuid(id);
    if (!key.bytes) {
        error = "failed session lookup: index error: " + key.error;
        return nullptr;
    }
    auto it = sessions_.find(*key.bytes);
    return it == sessions_.end() ? nullptr : &it->second;
}

store::session_get_result store::session_get(std::string_view id, watch_set* ws) const {
    session_get_result r;
    r.index = tables_.sessions;
    const parsed_uuid key = memdb_uuid(id);
    if (!key.bytes) {
        r.error = "failed session lookup: index error: " + key.error;
        return r;
    }
    if (ws)
        ws->push_back(session_tree_.watch_key(*key.bytes));
    auto it = sessions_.find(*key.bytes);
    if (it != sessions_.end())
        r.session = &it->second;
    return r;
}

store::session_list_result store::session_list(watch_set* ws) const {
    session_list_result r;
    r.index = tables_.sessions;
    if (ws)
        ws->push_back(session_tree_.watch_prefix({}));
    for (const auto& [key, s] : sessions_)
        r.sessions.push_back(&s);
    return r;
}

store::session_list_result store::node_sessions(std::string_view node, watch_set* ws) const {
    session_list_result r;
    r.index = tables_.sessions;
    std::string prefix = ascii_lower(node);
    prefix += '\0';
    if (ws)
        ws->push_back(session_node_tree_.watch_prefix(prefix));
    for (const auto& [key, s] : sessions_)
        if (boost::beast::iequals(s.node, node))
            r.sessions.push_back(&s);
    return r;
}

std::string store::session_create(session_rec s) {
    const std::uint64_t idx = next_index();
    auto n = nodes_.find(ascii_lower(s.node));
    if (n == nodes_.end())
        return "Missing node registration";
    for (const auto& id : s.check_ids()) {
        auto c = n->second.checks.find(id);
        if (c == n->second.checks.end())
            return "Missing check '" + id + "' registration";
        if (c->second.status == "critical")
            return "Check '" + id + "' is in critical state";
    }
    s.create_index = s.modify_index = idx;
    session_tree_.insert(s.key);
    session_node_tree_.insert(node_key(s.node, s.key));
    const std::string key = s.key;
    sessions_.emplace(key, std::move(s));
    tables_.sessions = idx;
    publish();
    return {};
}

std::string store::session_destroy(std::string_view id, steady_time now) {
    const std::uint64_t idx = next_index();
    const parsed_uuid key = memdb_uuid(id);
    if (!key.bytes)
        return "failed session lookup: index error: " + key.error;
    if (sessions_.find(*key.bytes) == sessions_.end())
        return {};
    delete_session(idx, *key.bytes, now);
    publish();
    return {};
}

void store::delete_session(std::uint64_t idx, const std::string& key, steady_time now) {
    auto it = sessions_.find(key);
    if (it == sessions_.end())
        return;
    const session_rec s = it->second;
    sessions_.erase(it);
    session_tree_.erase(s.key);
    session_node_tree_.erase(node_key(s.node, s.key));
    tables_.sessions = idx;

    // Forget lock-delays that have run out, then arm new ones for every key still held.
    for (auto d = lock_delays_.begin(); d != lock_delays_.end();)
        d = d->second <= now ? lock_delays_.erase(d) : std::next(d);
    const auto delay =
        std::min<std::int64_t>(s.lock_delay_ns, std::chrono::nanoseconds(max_lock_delay).count());
    std::vector<std::string> keys;
    if (auto h = held_.find(s.key); h != held_.end())
        keys.assign(h->second.begin(), h->second.end());
    for (const auto& k : keys) {
        if (s.behavior == "delete") {
            kvs_delete(idx, k);
        } else {
            kv_entry e = kvs_.at(k);
            e.session.clear();
            kvs_set(idx, e, true);
        }
        if (delay > 0)
            lock_delays_[k] = now + std::chrono::nanoseconds(delay);
    }
    held_.erase(s.key);
    if (on_session_destroyed)
        on_session_destroyed(s.id);
}

void store::invalidate_check(std::uint64_t idx, const std::string& node, const std::string& check,
                             steady_time now) {
    std::vector<std::string> doomed;
    for (const auto& [key, s] : sessions_) {
        if (!boost::beast::iequals(s.node, node))
            continue;
        const auto ids = s.check_ids();
        if (std::find(ids.begin(), ids.end(), check) != ids.end())
            doomed.push_back(key);
    }
    for (const auto& key : doomed)
        delete_session(idx, key, now);
}

// ---- catalog ---------------------------------------------------------------------------------

namespace {

bool valid_node_uuid(std::string_view id, std::string& error) {
    if (id.size() != 36) {
        error = "uuid string is wrong length";
        return false;
    }
    for (std::size_t i = 0; i < id.size(); ++i) {
        const char c = id[i];
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        if (dash ? c != '-' : !hex) {
            error = "uuid is improperly formatted";
            return false;
        }
    }
    return true;
}

} // namespace

std::string store::catalog_register(register_request r, steady_time now) {
    // Catalog.Register's checks, before Raft.
    if (r.node.empty())
        return "Must provide node";
    if (r.address.empty() && !r.skip_node_update)
        return "Must provide address if SkipNodeUpdate is not set";
    if (std::string err; !r.id.empty() && !valid_node_uuid(r.id, err))
        return "Bad node ID: " + err;
    if (r.service) {
        if (r.service->id.empty() && !r.service->service.empty())
            r.service->id = r.service->service;
        if (!r.service->id.empty() && r.service->service.empty())
            return "Must provide service name with ID";
    }
    for (auto& c : r.checks) {
        if (c.node.empty())
            c.node = r.node;
        if (c.id.empty() && !c.name.empty())
            c.id = c.name;
    }

    const std::uint64_t idx = next_index();
    const std::string node_key_lc = ascii_lower(r.node);
    auto existing = nodes_.find(node_key_lc);
    if (existing == nodes_.end() && r.skip_node_update)
        return "Missing node registration";
    // Validate the checks before changing anything (the memdb transaction is all-or-nothing).
    for (const auto& c : r.checks) {
        if (!boost::beast::iequals(c.node, r.node))
            return "Missing node registration";
        if (c.service_id.empty())
            continue;
        const bool in_request = r.service && r.service->id == c.service_id;
        const bool stored =
            existing != nodes_.end() && existing->second.services.count(c.service_id) != 0;
        if (!in_request && !stored)
            return "Missing service registration";
    }

    node_rec& n = nodes_[node_key_lc];
    if (!r.skip_node_update) {
        const bool changed = n.name != r.node || n.address != r.address ||
                             n.tagged_addresses != r.tagged_addresses || n.meta != r.meta ||
                             (!r.id.empty() && n.id != r.id);
        if (n.create_index == 0)
            n.create_index = idx;
        if (changed || n.modify_index == 0) {
            n.name = r.node;
            n.address = r.address;
            n.tagged_addresses = r.tagged_addresses;
            n.meta = r.meta;
            if (!r.id.empty())
                n.id = r.id;
            n.datacenter = datacenter_;
            n.modify_index = idx;
            tables_.nodes = idx;
        }
    }
    if (r.service) {
        service_rec s = *r.service;
        auto old = n.services.find(s.id);
        s.create_index = old != n.services.end() ? old->second.create_index : idx;
        s.modify_index = idx;
        n.services[s.id] = std::move(s);
        tables_.services = idx;
    }
    for (auto c : r.checks) {
        if (c.status.empty())
            c.status = "critical";
        if (!c.service_id.empty())
            c.service_name = n.services.at(c.service_id).service;
        auto old = n.checks.find(c.id);
        c.node = n.name;
        c.create_index = old != n.checks.end() ? old->second.create_index : idx;
        c.modify_index = idx;
        const bool critical = c.status == "critical";
        const std::string id = c.id;
        n.checks[id] = std::move(c);
        tables_.checks = idx;
        if (critical)
            invalidate_check(idx, r.node, id, now);
    }
    publish();
    return {};
}

std::string store::catalog_deregister(std::string_view node, std::string_view service_id,
                                      std::string_view check_id, steady_time now) {
    if (node.empty())
        return "Must provide node";
    const std::uint64_t idx = next_index();
    auto it = nodes_.find(ascii_lower(node));
    if (it == nodes_.end())
        return {};
    node_rec& n = it->second;
    const std::string name = n.name;

    const auto drop_check = [&](const std::string& id) {
        if (n.checks.erase(id) == 0)
            return;
        tables_.checks = idx;
        invalidate_check(idx, name, id, now);
    };
    const auto drop_service = [&](const std::string& id) {
        if (n.services.erase(id) == 0)
            return;
        tables_.services = idx;
        std::vector<std::string> ids;
        for (const auto& [cid, c] : n.checks)
            if (c.service_id == id)
                ids.push_back(cid);
        for (const auto& cid : ids)
            drop_check(cid);
    };

    if (service_id.empty() && check_id.empty()) {
        std::vector<std::string> services;
        for (const auto& [sid, s] : n.services)
            services.push_back(sid);
        for (const auto& sid : services)
            drop_service(sid);
        std::vector<std::string> checks;
        for (const auto& [cid, c] : n.checks)
            checks.push_back(cid);
        for (const auto& cid : checks)
            drop_check(cid);
        std::vector<std::string> sessions;
        for (const auto& [key, s] : sessions_)
            if (boost::beast::iequals(s.node, name))
                sessions.push_back(key);
        for (const auto& key : sessions)
            delete_session(idx, key, now);
        nodes_.erase(it);
        tables_.nodes = idx;
    } else {
        if (!service_id.empty())
            drop_service(std::string(service_id));
        if (!check_id.empty())
            drop_check(std::string(check_id));
    }
    publish();
    return {};
}

const node_rec* store::node(std::string_view name) const {
    auto it = nodes_.find(ascii_lower(name));
    return it == nodes_.end() ? nullptr : &it->second;
}

} // namespace conclave::dev::detail
