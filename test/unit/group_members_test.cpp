// SPDX-License-Identifier: BSL-1.0
// The group's rules without a server: which keys are members, what changed between two
// readings, which ids are usable, and what a join finds at its key.
#include "recipes/group/group_members.hpp"
#include "support/catch.hpp"

using namespace conclave;
using conclave::detail::diff_members;
using conclave::detail::join_verdict;
using conclave::detail::judge_join;
using conclave::detail::member_id_problem;
using conclave::detail::members_of;

namespace {

kv_entry entry(std::string key, std::string value, std::string session,
               std::uint64_t flags = group_member_flag_value) {
    kv_entry e;
    e.key = std::move(key);
    e.value = std::move(value);
    e.session = std::move(session);
    e.flags = flags;
    e.create_index = 5;
    e.modify_index = 7;
    return e;
}

member_info member(std::string id, std::string value, std::string session) {
    return member_info{std::move(id), std::move(value), std::move(session), 5, 7};
}

using kind = member_change::kind;

} // namespace

TEST_CASE("a member id is one non-empty path segment", "[group]") {
    CHECK(member_id_problem("worker-7").empty());
    CHECK(member_id_problem("10.0.0.7:9000").empty());
    CHECK_FALSE(member_id_problem("").empty());
    CHECK_FALSE(member_id_problem("a/b").empty());
    CHECK_FALSE(member_id_problem("a/").empty());
}

TEST_CASE("members are held keys one level under the prefix with the group's flags", "[group]") {
    const std::vector<kv_entry> entries{
        entry("g/b", "2", "s2"),
        entry("g/a", "1", "s1"),
        entry("g/released", "3", ""),                  // its session ended (behavior release)
        entry("g/locked", "4", "s3", lock_flag_value), // another recipe's
        entry("g/plain", "5", "", 0),
        entry("g/deep/er", "6", "s4"), // not one level under
        entry("gx/c", "7", "s5"),      // another prefix that starts alike
    };
    const auto got = members_of("g", entries);
    REQUIRE(got.size() == 2);
    CHECK(got[0] == member("a", "1", "s1"));
    CHECK(got[1] == member("b", "2", "s2"));
}

TEST_CASE("changes between two readings: left, then joined and updated, by id", "[group]") {
    const std::vector<member_info> before{member("a", "1", "s1"), member("b", "2", "s2"),
                                          member("c", "3", "s3")};
    const std::vector<member_info> after{member("b", "2bis", "s2"), member("c", "3", "s9"),
                                         member("d", "4", "s4")};
    const auto d = diff_members(before, after);
    REQUIRE(d.size() == 5);
    CHECK(d[0] == member_change{kind::left, member("a", "1", "s1")});
    CHECK(d[1] == member_change{kind::left, member("c", "3", "s3")}); // new session
    CHECK(d[2] == member_change{kind::updated, member("b", "2bis", "s2")});
    CHECK(d[3] == member_change{kind::joined, member("c", "3", "s9")});
    CHECK(d[4] == member_change{kind::joined, member("d", "4", "s4")});
    CHECK(diff_members(after, after).empty());
    CHECK(diff_members({}, before).size() == 3);
}

TEST_CASE("a join takes an absent, released or own key, and refuses others", "[group]") {
    CHECK(judge_join("g/a", std::nullopt, "s1").verdict == join_verdict::absent);
    CHECK(judge_join("g/a", entry("g/a", "", ""), "s1").verdict == join_verdict::free);
    CHECK(judge_join("g/a", entry("g/a", "", "s1"), "s1").verdict == join_verdict::ours);
    const auto held = judge_join("g/a", entry("g/a", "", "s2"), "s1");
    CHECK(held.verdict == join_verdict::held);
    CHECK(held.problem.find("held by session s2") != std::string::npos);
    const auto locked = judge_join("g/a", entry("g/a", "", "s2", lock_flag_value), "s1");
    CHECK(locked.verdict == join_verdict::conflict);
    CHECK(locked.problem.find("a lock's key") != std::string::npos);
    CHECK(judge_join("g/a", entry("g/a", "", "", semaphore_flag_value), "s1").verdict ==
          join_verdict::conflict);
    const auto plain = judge_join("g/a", entry("g/a", "x", "", 0), "s1");
    CHECK(plain.verdict == join_verdict::conflict);
    CHECK(plain.problem.find("plain value") != std::string::npos);
    CHECK(judge_join("g/a", entry("g/a", "x", "", 42), "s1").problem.find("flags 42") !=
          std::string::npos);
}
