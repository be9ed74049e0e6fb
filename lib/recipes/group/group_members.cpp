// SPDX-License-Identifier: BSL-1.0
#include "recipes/group/group_members.hpp"

#include <algorithm>

namespace conclave::detail {

std::string member_id_problem(const std::string& id) {
    if (id.empty())
        return "a member id must not be empty";
    if (id.find('/') != std::string::npos)
        return "member id \"" + id + "\" has a '/' (a member is one key under the prefix)";
    return {};
}

std::vector<member_info> members_of(const std::string& prefix,
                                    const std::vector<kv_entry>& entries) {
    const auto folder = prefix + "/";
    std::vector<member_info> members;
    for (const auto& e : entries) {
        if (!e.key.starts_with(folder) || e.flags != group_member_flag_value || e.session.empty())
            continue;
        auto id = e.key.substr(folder.size());
        if (!member_id_problem(id).empty())
            continue;
        members.push_back(
            member_info{std::move(id), e.value, e.session, e.create_index, e.modify_index});
    }
    std::sort(members.begin(), members.end(),
              [](const member_info& a, const member_info& b) { return a.id < b.id; });
    return members;
}

std::vector<member_change> diff_members(const std::vector<member_info>& before,
                                        const std::vector<member_info>& after) {
    using kind = member_change::kind;
    std::vector<member_change> left, came;
    auto b = before.begin();
    auto a = after.begin();
    while (b != before.end() || a != after.end()) {
        if (a == after.end() || (b != before.end() && b->id < a->id)) {
            left.push_back(member_change{kind::left, *b++});
        } else if (b == before.end() || a->id < b->id) {
            came.push_back(member_change{kind::joined, *a++});
        } else {
            if (b->session != a->session) { // gone, and back with another session
                left.push_back(member_change{kind::left, *b});
                came.push_back(member_change{kind::joined, *a});
            } else if (b->value != a->value) {
                came.push_back(member_change{kind::updated, *a});
            }
            ++a;
            ++b;
        }
    }
    left.insert(left.end(), came.begin(), came.end());
    return left;
}

join_judgement judge_join(const std::string& key, const std::optional<kv_entry>& e,
                          const std::string& session) {
    if (!e)
        return {join_verdict::absent, {}};
    const auto named = "key " + key + " ";
    if (e->flags != group_member_flag_value) {
        std::string what;
        if (e->flags == lock_flag_value)
            what = "is a lock's key";
        else if (e->flags == semaphore_flag_value)
            what = "is a semaphore's key";
        else if (e->flags != 0)
            what = "has flags " + std::to_string(e->flags);
        else
            what = "holds a plain value";
        return {join_verdict::conflict, named + what + ", not a group member's (flags " +
                                            std::to_string(group_member_flag_value) +
                                            "); nothing written"};
    }
    if (e->session.empty())
        return {join_verdict::free, {}};
    if (e->session == session)
        return {join_verdict::ours, {}};
    return {join_verdict::held, named + "is held by session " + e->session +
                                    ": a live member already has that id; nothing written"};
}

} // namespace conclave::detail
