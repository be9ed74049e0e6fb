// SPDX-License-Identifier: BSL-1.0
// Who leads and who waits, from an elector's key and its contender keys, without a server.
#include "recipes/elector/participants.hpp"
#include "support/catch.hpp"

using namespace conclave;
using conclave::detail::participants_of;

namespace {

kv_entry entry(std::string key, std::string value, std::string session, std::uint64_t create,
               std::uint64_t flags = 0) {
    kv_entry e;
    e.key = std::move(key);
    e.value = std::move(value);
    e.session = std::move(session);
    e.create_index = create;
    e.modify_index = create;
    e.flags = flags;
    return e;
}

} // namespace

TEST_CASE("participants: the leader, then live contenders by CreateIndex", "[elector]") {
    const std::vector<kv_entry> entries{
        entry("svc/leader", "a", "sa", 3, lock_flag_value),
        entry("svc/leader/.queue/sc.2", "c", "sc", 9),
        entry("svc/leader/.queue/sb.1", "b", "sb", 7),
        entry("svc/leader/.queue/sd.4", "d", "", 8),              // its session is gone
        entry("svc/leader-other", "x", "sx", 2, lock_flag_value), // another key
    };
    auto [ec, line] = participants_of("svc/leader", entries);
    CHECK_FALSE(ec);
    CHECK(line ==
          std::vector<participant>{{"a", "sa", true}, {"b", "sb", false}, {"c", "sc", false}});
}

TEST_CASE("participants: nobody leads, a free key, another recipe's key", "[elector]") {
    CHECK(participants_of("k", {}).second.empty());
    auto free = participants_of(
        "k", {entry("k", "old", "", 1, lock_flag_value), entry("k/.queue/s.1", "w", "s", 4)});
    CHECK(free.second == std::vector<participant>{{"w", "s", false}});
    auto other = participants_of("k", {entry("k", "v", "s", 1, semaphore_flag_value)});
    CHECK(other.first == errc::conflict);
}
