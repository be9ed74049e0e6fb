// SPDX-License-Identifier: BSL-1.0
// What a group's keys say, without I/O: which entries are members, what changed between
// two readings, whether an id is usable and what a join finds at its key.
#pragma once

#include <conclave/consul/kv.hpp>
#include <conclave/group.hpp>

#include <optional>
#include <string>
#include <vector>

namespace conclave::detail {

/// Why `id` cannot name a member (empty: it can): empty, or with a '/' (a member is one
/// level under the prefix).
std::string member_id_problem(const std::string& id);

/// The members among `entries` (a recursive read of `prefix` + "/"): keys one level under
/// the prefix, with the group's flags, held by a session. By id.
std::vector<member_info> members_of(const std::string& prefix,
                                    const std::vector<kv_entry>& entries);

/// From `before` to `after` (both by id): left (as they were), then joined and updated (as
/// they are), each by id. A member whose session changed left and joined again.
std::vector<member_change> diff_members(const std::vector<member_info>& before,
                                        const std::vector<member_info>& after);

/// What a join with `session` finds at its key.
enum class join_verdict {
    absent,   ///< no key: create it
    free,     ///< a member key no session holds (its session ended): take it over
    ours,     ///< held by this session already: write it again (a retried join)
    held,     ///< held by another session: a live member with that id
    conflict, ///< not a member key (another recipe's, a plain key)
};

/// The verdict, and for held and conflict the text of errc::conflict's message.
struct join_judgement {
    join_verdict verdict = join_verdict::absent;
    std::string problem;
};

join_judgement judge_join(const std::string& key, const std::optional<kv_entry>& e,
                          const std::string& session);

} // namespace conclave::detail
