// SPDX-License-Identifier: BSL-1.0
// The read-write lock's rules without a server (recipes/rwlock/rw_rules.hpp): who holds,
// given the contenders in CreateIndex order, and who may upgrade.
#include "recipes/rwlock/rw_rules.hpp"
#include "support/catch.hpp"

using namespace conclave;
using namespace conclave::detail;

namespace {

// Contenders from a spelling: 'r'/'w' live reader/writer, 'R'/'W' dead ones (no session).
std::vector<rw_contender> line(const std::string& spelling) {
    std::vector<rw_contender> cs;
    std::uint64_t index = 10;
    for (char c : spelling) {
        const bool write = c == 'w' || c == 'W';
        const bool live = c == 'r' || c == 'w';
        cs.emplace_back("k/.rwlock/" + std::to_string(index), live ? "s" : "",
                        write ? rw_mode::write : rw_mode::read, index, index);
        index += 10;
    }
    return cs;
}

// Which contenders hold, as a spelling: '+' holds, '.' does not.
std::string holders(const std::string& spelling) {
    const auto cs = line(spelling);
    std::string out;
    for (std::size_t i = 0; i < cs.size(); ++i)
        out += rw_holds(cs, i) ? '+' : '.';
    return out;
}

} // namespace

TEST_CASE("rw rules: readers hold together until a writer, in order", "[rwlock]") {
    CHECK(holders("rrr") == "+++");
    CHECK(holders("rrwr") == "++.."); // a writer waits for the readers before it ...
    CHECK(holders("wrr") == "+..");   // ... and readers after a writer wait for it
    CHECK(holders("ww") == "+.");     // one writer at a time
    CHECK(holders("rwrw") == "+..."); // FIFO: no reader passes a waiting writer
}

TEST_CASE("rw rules: dead contenders are skipped and never hold", "[rwlock]") {
    CHECK(holders("Wr") == ".+");
    CHECK(holders("Rw") == ".+");
    CHECK(holders("rWr") == "+.+");
    CHECK(holders("WWw") == "..+");
}

TEST_CASE("rw rules: every wait is for an older contender (no cycle)", "[rwlock]") {
    // Whoever holds is never behind a live contender that waits.
    for (const std::string spelling : {"rrwrrw", "wrwr", "rwwr", "rrrw", "wwww", "rwRr"}) {
        const auto cs = line(spelling);
        bool someone_waits = false;
        for (std::size_t i = 0; i < cs.size(); ++i) {
            if (!cs[i].live())
                continue;
            if (rw_holds(cs, i))
                CHECK_FALSE(someone_waits);
            else
                someone_waits = true;
        }
        // The first live contender always holds: the line always moves.
        for (std::size_t i = 0; i < cs.size(); ++i) {
            if (cs[i].live()) {
                CHECK(rw_holds(cs, i));
                break;
            }
        }
    }
}

TEST_CASE("rw rules: only the sole reader that holds may upgrade", "[rwlock]") {
    auto cs = line("r");
    CHECK(rw_may_upgrade(cs, 0));
    cs = line("rw"); // a writer waiting behind: still the sole reader
    CHECK(rw_may_upgrade(cs, 0));
    cs = line("rwr"); // the reader behind the writer does not hold
    CHECK(rw_may_upgrade(cs, 0));
    cs = line("rr"); // two readers hold: neither may
    CHECK_FALSE(rw_may_upgrade(cs, 0));
    CHECK_FALSE(rw_may_upgrade(cs, 1));
    cs = line("Rr"); // the dead one does not count
    CHECK(rw_may_upgrade(cs, 1));
    cs = line("wr"); // a waiting reader may not
    CHECK_FALSE(rw_may_upgrade(cs, 1));
    cs = line("w"); // a writer is not a reader
    CHECK_FALSE(rw_may_upgrade(cs, 0));
}

TEST_CASE("rw rules: a contender is found by its key", "[rwlock]") {
    const auto cs = line("rw");
    CHECK(rw_find(cs, "k/.rwlock/20") == std::size_t{1});
    CHECK_FALSE(rw_find(cs, "k/.rwlock/30"));
}

TEST_CASE("rw rules: a writer is not starved by readers that come after it", "[rwlock]") {
    // Two readers hold, a writer waits, and readers keep coming: none of them passes it.
    auto cs = line("rrw");
    for (int i = 0; i < 5; ++i) {
        const std::uint64_t index = 100 + 10 * static_cast<std::uint64_t>(i);
        cs.emplace_back("k/.rwlock/" + std::to_string(index), "s", rw_mode::read, index, index);
    }
    CHECK(rw_holds(cs, 0));
    CHECK(rw_holds(cs, 1));
    for (std::size_t i = 2; i < cs.size(); ++i)
        CHECK_FALSE(rw_holds(cs, i));
    // The first reader leaves: the writer still waits for the second.
    cs[0].session.clear();
    CHECK_FALSE(rw_holds(cs, 2));
    // Both gone: the writer holds, alone; the readers behind it still wait.
    cs[1].session.clear();
    CHECK(rw_holds(cs, 2));
    for (std::size_t i = 3; i < cs.size(); ++i)
        CHECK_FALSE(rw_holds(cs, i));
    // The writer leaves: every reader behind it holds together.
    cs[2].session.clear();
    for (std::size_t i = 3; i < cs.size(); ++i)
        CHECK(rw_holds(cs, i));
}

TEST_CASE("rw rules: a position past the line, or an empty line, holds nothing", "[rwlock]") {
    const std::vector<rw_contender> none;
    CHECK_FALSE(rw_holds(none, 0));
    CHECK_FALSE(rw_may_upgrade(none, 0));
    CHECK_FALSE(rw_find(none, "k/.rwlock/10"));
    const auto cs = line("rr");
    CHECK_FALSE(rw_holds(cs, 2));
    CHECK_FALSE(rw_may_upgrade(cs, 2));
}

TEST_CASE("rw rules: a reader may upgrade once the readers holding with it are gone", "[rwlock]") {
    auto cs = line("rrrw");
    for (std::size_t i = 0; i < 3; ++i)
        CHECK_FALSE(rw_may_upgrade(cs, i));
    cs[0].session.clear();
    CHECK_FALSE(rw_may_upgrade(cs, 2)); // the second still holds with it
    cs[1].session.clear();
    CHECK(rw_may_upgrade(cs, 2));
    CHECK_FALSE(rw_may_upgrade(cs, 0)); // a dead reader never may
    CHECK_FALSE(rw_may_upgrade(cs, 3)); // nor the waiting writer
}

namespace {

kv_entry entry(std::string key, std::uint64_t flags, std::uint64_t create, std::string session = "",
               std::uint64_t modify = 0) {
    kv_entry e;
    e.key = std::move(key);
    e.flags = flags;
    e.create_index = create;
    e.modify_index = modify ? modify : create;
    e.session = std::move(session);
    return e;
}

} // namespace

TEST_CASE("rw prefix: contenders are served in CreateIndex order, not in key order", "[rwlock]") {
    // Listed in key order ("a" < "b" < "c"), created in the order c, a, b.
    std::vector<kv_entry> entries{
        entry("k/.rwlock/a", rw_read_flags, 20, "s1", 25),
        entry("k/.rwlock/b", rw_read_flags, 30, "s2"),
        entry("k/.rwlock/c", rw_write_flags, 10, "s3"),
    };
    const auto r = read_rw_prefix("k", std::move(entries));
    CHECK(r.conflict.empty());
    REQUIRE(r.contenders.size() == 3);
    CHECK(r.contenders[0].key == "k/.rwlock/c");
    CHECK(r.contenders[0].mode == rw_mode::write);
    CHECK(r.contenders[1].key == "k/.rwlock/a");
    CHECK(r.contenders[1].session == "s1");
    CHECK(r.contenders[1].modify_index == 25);
    CHECK(r.contenders[2].key == "k/.rwlock/b");
    // The writer created first holds; the readers listed before it in key order wait.
    CHECK(rw_holds(r.contenders, 0));
    CHECK_FALSE(rw_holds(r.contenders, 1));
    CHECK_FALSE(rw_holds(r.contenders, 2));
}

TEST_CASE("rw prefix: a plain lock on the key itself is a conflict, a plain value is not",
          "[rwlock]") {
    std::vector<kv_entry> locked{entry("k", lock_flag_value, 5, "s")};
    const auto r = read_rw_prefix("k", std::move(locked));
    CHECK(r.conflict == "a lock uses \"k\"");
    std::vector<kv_entry> value{entry("k", 0, 5)};
    CHECK(read_rw_prefix("k", std::move(value)).conflict.empty());
}

TEST_CASE("rw prefix: a semaphore or consul lock on <key>/.lock is a conflict", "[rwlock]") {
    for (const auto flags : {lock_flag_value, semaphore_flag_value}) {
        std::vector<kv_entry> entries{entry("k/.lock", flags, 5)};
        CHECK(read_rw_prefix("k", std::move(entries)).conflict ==
              "a semaphore or consul lock uses \"k/.lock\"");
    }
    std::vector<kv_entry> other{entry("k/.lock", 7, 5)}; // someone's plain value
    CHECK(read_rw_prefix("k", std::move(other)).conflict.empty());
}

TEST_CASE("rw prefix: the sequence key's index is read, its flags checked", "[rwlock]") {
    std::vector<kv_entry> ours{entry("k/.rwlock", rw_sequence_flags, 3, "", 42)};
    auto r = read_rw_prefix("k", std::move(ours));
    CHECK(r.conflict.empty());
    CHECK(r.sequence_index == 42);
    CHECK(r.contenders.empty()); // (not a contender)
    std::vector<kv_entry> foreign{entry("k/.rwlock", 0, 3, "", 43)};
    r = read_rw_prefix("k", std::move(foreign));
    CHECK(r.conflict == "\"k/.rwlock\" has other flags");
    CHECK(r.sequence_index == 43);
    CHECK(read_rw_prefix("k", {}).sequence_index == 0); // absent
}

TEST_CASE("rw prefix: a contender key with other flags is a conflict and no contender",
          "[rwlock]") {
    std::vector<kv_entry> entries{
        entry("k/.rwlock/1", rw_read_flags, 10, "s1"),
        entry("k/.rwlock/2", lock_flag_value, 11, "s2"),
        entry("k/.rwlock/3", rw_write_flags, 12), // released: dead, still listed
    };
    const auto r = read_rw_prefix("k", std::move(entries));
    CHECK(r.conflict == "\"k/.rwlock/2\" has other flags");
    REQUIRE(r.contenders.size() == 2);
    CHECK(r.contenders[0].key == "k/.rwlock/1");
    CHECK(r.contenders[1].key == "k/.rwlock/3");
    CHECK_FALSE(r.contenders[1].live());
    CHECK(rw_holds(r.contenders, 0)); // the dead writer holds nobody back
}

TEST_CASE("rw prefix: keys that only start with the same characters are not the lock's",
          "[rwlock]") {
    std::vector<kv_entry> entries{
        entry("k2", lock_flag_value, 1, "s"),              // another key's lock
        entry("k2/.lock", semaphore_flag_value, 2),        // another key's semaphore
        entry("k/.rwlockx", 0, 3),                         // not the sequence key
        entry("k/.rwlocks/1", lock_flag_value, 4, "s"),    // not under `.rwlock/`
        entry("k/notes", 9, 5),                            // the user's own key
        entry("k/.rwlock/1", rw_write_flags, 6, "writer"), // the one contender
    };
    const auto r = read_rw_prefix("k", std::move(entries));
    CHECK(r.conflict.empty());
    CHECK(r.sequence_index == 0);
    REQUIRE(r.contenders.size() == 1);
    CHECK(r.contenders[0].key == "k/.rwlock/1");
}

TEST_CASE("rw rules: the flags spell their names and differ from other recipes'", "[rwlock]") {
    auto spelled = [](std::uint64_t flags) {
        std::string s;
        for (int shift = 56; shift >= 0; shift -= 8)
            s += static_cast<char>((flags >> shift) & 0xff);
        return s;
    };
    CHECK(spelled(rw_read_flags) == "rwlockRD");
    CHECK(spelled(rw_write_flags) == "rwlockWR");
    CHECK(spelled(rw_sequence_flags) == "rwlockSQ");
    for (const auto f : {rw_read_flags, rw_write_flags, rw_sequence_flags}) {
        CHECK(f != lock_flag_value);
        CHECK(f != semaphore_flag_value);
    }
}
