// SPDX-License-Identifier: BSL-1.0
// The read-write lock's rules without a server (recipes/rwlock/rw_rules.hpp): who holds,
// given the contenders in CreateIndex order, and who may upgrade.
#include "recipes/rwlock/rw_rules.hpp"
#include "support/catch.hpp"

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
