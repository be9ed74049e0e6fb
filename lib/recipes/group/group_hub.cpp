// SPDX-License-Identifier: BSL-1.0
// group_hub: one blocking read of the prefix, its members for every local waiter.
#include "recipes/group/group_hub.hpp"
#include "recipes/group/group_members.hpp"

#include <algorithm>

namespace conclave::detail {

std::shared_ptr<group_hub> group_hub::of(const client& c, const std::string& prefix, settings s) {
    return find_or_make<group_hub>(c, "group-hub:" + prefix,
                                   [&] { return std::make_shared<group_hub>(c, prefix, s); });
}

group_hub::group_hub(client c, std::string p, settings s)
    : list_hub(std::move(c), "group-hub:" + p, p + "/", s)
    , prefix(std::move(p)) {}

const member_info* group_hub::member(const std::string& id) const {
    auto it = std::find_if(members_.begin(), members_.end(),
                           [&](const member_info& m) { return m.id == id; });
    return it == members_.end() ? nullptr : &*it;
}

void group_hub::wrote(const member_info& m) {
    if (known() && state_index() > m.modify_index)
        return; // the query read something newer already
    auto it = std::find_if(members_.begin(), members_.end(),
                           [&](const member_info& x) { return x.id == m.id; });
    if (it != members_.end())
        *it = m;
    else
        members_.insert(std::upper_bound(
                            members_.begin(), members_.end(), m,
                            [](const member_info& a, const member_info& b) { return a.id < b.id; }),
                        m);
    // Known only if it was: one write says nothing of the other members.
    if (known())
        accept_write(m.modify_index);
    poke();
}

void group_hub::delete_dead(const std::vector<kv_entry>& entries) {
    std::map<std::string, std::uint64_t> still;
    for (const auto& e : entries) {
        if (e.flags != group_member_flag_value || !e.session.empty())
            continue;
        auto asked = deleting_.find(e.key);
        if (asked == deleting_.end() || asked->second != e.modify_index)
            delete_in_background(consul, e.key, e.modify_index);
        still.emplace(e.key, e.modify_index);
    }
    deleting_ = std::move(still);
}

void group_hub::store(std::vector<kv_entry> entries) {
    members_ = members_of(prefix, entries);
    delete_dead(entries);
}

} // namespace conclave::detail
