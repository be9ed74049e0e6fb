// SPDX-License-Identifier: BSL-1.0
// group_hub: one blocking read of the prefix, its members for every local waiter.
#include "recipes/group/group_hub.hpp"
#include "recipes/group/group_members.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace conclave::detail {

std::shared_ptr<group_hub> group_hub::of(const client& c, const std::string& prefix, settings s) {
    return find_or_make<group_hub>(c, "group-hub:" + prefix,
                                   [&] { return std::make_shared<group_hub>(c, prefix, s); });
}

group_hub::group_hub(client c, std::string p, settings s)
    : shared_query(std::move(c), "group-hub:" + p, s)
    , prefix(std::move(p)) {}

const member_info* group_hub::member(const std::string& id) const {
    auto it = std::find_if(members_.begin(), members_.end(),
                           [&](const member_info& m) { return m.id == id; });
    return it == members_.end() ? nullptr : &*it;
}

std::shared_ptr<void> group_hub::writing() {
    ++writes_in_flight_;
    auto self = std::static_pointer_cast<group_hub>(shared_from_this());
    return std::shared_ptr<void>(nullptr, [self](void*) {
        --self->writes_in_flight_;
        self->poke(); // the query may go on
    });
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

asio::awaitable<error_code> group_hub::read_once(query_options q, asio::cancellation_slot stop) {
    auto token = asio::bind_cancellation_slot(stop, asio::as_tuple(asio::use_awaitable));
    auto [ec, r] = co_await consul.async_kv_list(prefix + "/", q, token);
    if (!ec && accept_read(r.meta.index)) {
        members_ = members_of(prefix, r.entries);
        delete_dead(r.entries);
        poke();
    }
    co_return ec;
}

} // namespace conclave::detail
