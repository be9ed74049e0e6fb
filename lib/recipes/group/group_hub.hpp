// SPDX-License-Identifier: BSL-1.0
// group_hub: the blocking read of a group's prefix that every local watch and membership of
// that group shares (one query per client and prefix), and the members it last read.
#pragma once

#include "recipes/common/list_hub.hpp"

#include <conclave/client.hpp>
#include <conclave/group.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace conclave::detail {

class group_hub final : public list_hub {
public:
    /// The hub of `prefix` on `c`, shared by every group object of that client and prefix.
    static std::shared_ptr<group_hub> of(const client& c, const std::string& prefix, settings s);

    group_hub(client c, std::string prefix, settings s);

    const std::string prefix;

    /// The members when known(), by id.
    const std::vector<member_info>& members() const noexcept { return members_; }
    /// The member `id` as known, or null.
    const member_info* member(const std::string& id) const;

    /// Our write at `m.modify_index` made `m` a member (or changed its value): known at
    /// once, before the query reads it back.
    void wrote(const member_info& m);

private:
    void store(std::vector<kv_entry> entries) override;
    // Member keys whose session ended with behavior `release` stay, unheld: deleted (if
    // unchanged since) so that a group does not collect them. Once per key and index.
    void delete_dead(const std::vector<kv_entry>& entries);

    std::vector<member_info> members_;
    std::map<std::string, std::uint64_t> deleting_; ///< dead keys asked to go, at that index
};

} // namespace conclave::detail
