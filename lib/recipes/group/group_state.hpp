// SPDX-License-Identifier: BSL-1.0
// State of a group object, of its memberships and of its watches.
#pragma once

#include "recipes/common/grant.hpp"
#include "recipes/common/keyed_state.hpp"
#include "recipes/group/group_hub.hpp"

#include <conclave/group.hpp>

#include <optional>
#include <string>
#include <vector>

namespace conclave::detail {

/// A group object's client, prefix (`key`, without its trailing '/') and options, and the
/// prefix's hub.
struct group_state : keyed_state<group_options, group_hub> {
    group_state(client c, std::string prefix, const group_options& o)
        : keyed_state(std::move(c), std::move(prefix), o,
                      group_hub::settings{o.wait, o.monitor_retry_wait, false}) {}

    /// The key of member `id`.
    std::string key_of(const std::string& id) const { return key + "/" + id; }
    /// The bound of a join, update or leave.
    std::chrono::milliseconds budget() const {
        return opts.budget.count() > 0 ? opts.budget : consul.config().request_timeout;
    }
    /// The handle of a membership (membership's constructor is ours only).
    static membership handle(std::shared_ptr<grant_state> m) { return membership{std::move(m)}; }
};

/// A membership: the grant of the key `<prefix>/<id>` to its session.
struct member_state : grant_of<group_state> {
    member_state(std::shared_ptr<group_state> g, std::shared_ptr<session_state> s, fencing_token t,
                 std::string member_id)
        : grant_of(std::move(g), std::move(s), std::move(t), hold_kind::group_member)
        , id(std::move(member_id))
        , written(token.modify_index) {}

    void start_wait_lost(std::shared_ptr<grant_state> self,
                         asio::any_completion_handler<void(error_code)> h) override;
    void start_release(std::shared_ptr<grant_state> self,
                       asio::any_completion_handler<void(error_code)> h) override;

    const std::string id;
    /// ModifyIndex of our last write of the key (join, update): a view older than it says
    /// nothing about whether we still hold it.
    std::uint64_t written;
};

/// A group_watch: its group and what it reported last.
struct group_watch_state {
    explicit group_watch_state(std::shared_ptr<group_state> g)
        : group(std::move(g)) {}
    std::shared_ptr<group_state> group;
    std::optional<std::vector<member_info>> last; ///< none: nothing reported yet
    bool busy = false;                            ///< an async_next is in progress
};

} // namespace conclave::detail
