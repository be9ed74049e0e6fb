// SPDX-License-Identifier: BSL-1.0
// Who leads and who waits, from the elector's key and its contender keys, without I/O.
#pragma once

#include <conclave/consul/kv.hpp>
#include <conclave/elector.hpp>
#include <conclave/error.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace conclave::detail {

using leader_result = std::pair<error_code, std::optional<leader_info>>;

/// The leader a key names (empty: free or absent); errc::conflict for a key of another
/// recipe.
inline leader_result leader_of(const std::optional<kv_entry>& e) {
    if (!e || e->session.empty())
        return {};
    if (e->flags != lock_flag_value)
        return {make_error_code(errc::conflict), std::nullopt};
    return {error_code{}, leader_info{e->value, e->session, e->lock_index, e->modify_index}};
}

/// The candidates in the order they would lead, from a recursive read of `key`: the
/// holder of `key`, then the live contender keys under `<key>/.queue/` (fair mode) by
/// CreateIndex. Other keys that merely start with `key` are not the elector's.
inline std::pair<error_code, std::vector<participant>>
participants_of(const std::string& key, const std::vector<kv_entry>& entries) {
    std::optional<kv_entry> held;
    std::vector<const kv_entry*> waiting;
    const auto queue = key + "/.queue/";
    for (const auto& e : entries) {
        if (e.key == key)
            held = e;
        else if (e.key.starts_with(queue) && !e.session.empty())
            waiting.push_back(&e);
    }
    auto [ec, leader] = leader_of(held);
    if (ec)
        return {ec, {}};
    std::vector<participant> line;
    if (leader)
        line.push_back(participant{leader->value, leader->session, true});
    std::sort(waiting.begin(), waiting.end(), [](const kv_entry* a, const kv_entry* b) {
        return a->create_index < b->create_index;
    });
    for (const auto* w : waiting)
        line.push_back(participant{w->value, w->session, false});
    return {error_code{}, std::move(line)};
}

} // namespace conclave::detail
