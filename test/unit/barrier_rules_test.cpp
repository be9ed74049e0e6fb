// SPDX-License-Identifier: BSL-1.0
// The double barrier's and the countdown latch's rules without a server: who counts as
// inside, when the barrier is open or its marker stale, what an enter does next, which
// round a leave waits for; a latch's count, its writes, and the keys that are another's.
#include "recipes/barrier/double_barrier_rules.hpp"
#include "recipes/barrier/latch_rules.hpp"
#include "support/catch.hpp"

#include <string>
#include <vector>

using namespace conclave;
using namespace conclave::detail;

namespace {

const std::string prefix = "jobs/b";

// A participant key of `session`, created at `create`, held by `holder` (its own session
// unless said), expecting `n`.
kv_entry participant(const std::string& session, std::uint64_t create, std::uint32_t n = 3,
                     const std::string* holder = nullptr) {
    kv_entry e;
    e.key = prefix + "/" + session;
    e.value = std::to_string(n);
    e.flags = double_barrier_flag_value;
    e.session = holder ? *holder : session;
    e.create_index = create;
    e.modify_index = create;
    return e;
}

kv_entry ready(const std::string& text, std::uint64_t index = 50) {
    kv_entry e;
    e.key = prefix + "/.ready";
    e.value = text;
    e.flags = double_barrier_flag_value;
    e.create_index = index;
    e.modify_index = index;
    return e;
}

} // namespace

TEST_CASE("a participant counts only while its own session holds its key", "[barrier]") {
    const std::string none;
    const auto r = read_barrier(
        prefix, {participant("a", 10), participant("b", 11, 3, &none), participant("c", 12)});
    CHECK(r.problem.empty());
    REQUIRE(r.live.size() == 2);
    CHECK(r.live[0].id == round_member{"a", 10});
    CHECK(r.live[1].id == round_member{"c", 12});
    // Released by Consul when its session ended (behavior release): to delete, as read.
    REQUIRE(r.dead.size() == 1);
    CHECK(r.dead[0] == std::pair<std::string, std::uint64_t>{prefix + "/b", 11});
    CHECK(decide_enter(r, "a", 3) == enter_step::wait); // b does not count: 2 of 3
    CHECK(decide_enter(r, "b", 3) == enter_step::not_inside);
    const auto two = read_barrier(prefix, {participant("a", 10, 2), participant("c", 12, 2)});
    CHECK(decide_enter(two, "a", 2) == enter_step::write_ready);
}

TEST_CASE("the marker lists the participants and keeps the barrier open for its round",
          "[barrier]") {
    const std::vector<kv_entry> three{participant("a", 10), participant("b", 11),
                                      participant("c", 12)};
    const auto full = read_barrier(prefix, three);
    const auto text = format_ready(full.live);
    CHECK(text == "a 10\nb 11\nc 12\n");
    REQUIRE(parse_ready(text));
    CHECK(parse_ready(text)->size() == 3);

    // Later, a and b have left: c, reading now, sees the barrier open all the same.
    const auto late = read_barrier(prefix, {participant("c", 12), ready(text)});
    CHECK(late.open());
    CHECK(decide_enter(late, "c", 3) == enter_step::open);
    // One that comes after it opened passes too (Curator's and etcd's late arriver).
    const auto extra =
        read_barrier(prefix, {participant("c", 12), participant("d", 60), ready(text)});
    CHECK(decide_enter(extra, "d", 3) == enter_step::open);
}

TEST_CASE("a marker whose round has gone is stale even with its sessions back", "[barrier]") {
    const auto text = std::string{"a 10\nb 11\n"};
    // a and b entered again (new keys): a new round, not the marker's.
    const auto again = read_barrier(prefix, {participant("a", 70, 2), ready(text)});
    CHECK_FALSE(again.open());
    CHECK(decide_enter(again, "a", 2) == enter_step::remove_stale);
    const auto fresh = read_barrier(prefix, {participant("a", 70, 2), participant("b", 71, 2)});
    CHECK(decide_enter(fresh, "a", 2) == enter_step::write_ready);
}

TEST_CASE("a leave waits for its round only", "[barrier]") {
    const auto text = std::string{"a 10\nb 11\n"};
    const auto before = read_barrier(prefix, {participant("a", 10, 2), participant("b", 11, 2),
                                              participant("x", 80, 2), ready(text)});
    const auto round = round_of(before, "a");
    CHECK(round == std::vector<round_member>{{"a", 10}, {"b", 11}});
    CHECK_FALSE(all_left(before, round, "a"));
    // b left; x (who came later) is still inside: a's round has gone.
    const auto after = read_barrier(prefix, {participant("x", 80, 2), ready(text)});
    CHECK(all_left(after, round, "a"));
    // b back with a new key is not b of that round.
    const auto back = read_barrier(prefix, {participant("b", 90, 2)});
    CHECK(all_left(back, round, "a"));
    // Without a marker listing it, a leave waits for everyone inside when it began.
    const auto unopened = read_barrier(prefix, {participant("a", 10, 2), participant("c", 12, 2)});
    CHECK(round_of(unopened, "a") == std::vector<round_member>{{"a", 10}, {"c", 12}});
    CHECK(round_of(unopened, "z").empty()); // a leave without an enter waits for nobody
}

TEST_CASE("keys that are not a double barrier's are a conflict naming them", "[barrier]") {
    auto lock_key = participant("a", 10);
    lock_key.flags = lock_flag_value;
    const auto locked = read_barrier(prefix, {lock_key});
    CHECK(locked.problem == "key jobs/b/a is not a double barrier's: it is a lock's key (flags " +
                                std::to_string(lock_flag_value) + ")");
    CHECK(decide_enter(locked, "a", 3) == enter_step::conflict);

    const std::string other = "z";
    CHECK(read_barrier(prefix, {participant("a", 10, 3, &other)})
              .problem.find("session z holds it") != std::string::npos);
    CHECK_FALSE(read_barrier(prefix, {ready("garbage")}).problem.empty());
    auto zero = participant("a", 10);
    zero.value = "0";
    CHECK_FALSE(read_barrier(prefix, {zero}).problem.empty());
    // A sibling prefix that shares the text ("jobs/b" lists "jobs/b2/...") is not looked at.
    auto sibling = participant("a", 10);
    sibling.key = "jobs/b2/a";
    sibling.flags = 7;
    CHECK(read_barrier(prefix, {sibling}).problem.empty());
}

TEST_CASE("participants that expect another count are a count conflict", "[barrier]") {
    const auto r = read_barrier(prefix, {participant("a", 10, 3), participant("b", 11, 4)});
    CHECK(decide_enter(r, "a", 3) == enter_step::count_conflict);
}

TEST_CASE("a latch's count is decimal text under its flags", "[latch]") {
    CHECK(judge_latch("k", std::nullopt).count == 0u); // missing: open
    kv_entry e;
    e.key = "k";
    e.flags = latch_flag_value;
    e.value = "3";
    CHECK(judge_latch("k", e).count == 3u);
    e.value = "three";
    CHECK(judge_latch("k", e).problem ==
          "key k is not a countdown latch: its value \"three\" is not a count (a decimal number)");
    e.value = "-1";
    CHECK_FALSE(judge_latch("k", e).count);
    e.value = "3";
    e.flags = semaphore_flag_value;
    CHECK(judge_latch("k", e).problem.find("it is a semaphore's key") != std::string::npos);
    e.flags = 0; // a counter's
    CHECK(judge_latch("k", e).problem.find("it has flags 0") != std::string::npos);
    e.flags = latch_flag_value;
    e.session = "s";
    CHECK(judge_latch("k", e).problem.find("session s holds it") != std::string::npos);
}

TEST_CASE("a count down never goes below 0 and deletes the key at 0", "[latch]") {
    CHECK(count_down_step(0).act == cas_step::action::finish);
    CHECK(count_down_step(1).act == cas_step::action::remove);
    const auto two = count_down_step(3);
    CHECK(two.act == cas_step::action::put);
    CHECK(two.value == "2");
    CHECK(two.flags == latch_flag_value);
    // A count is set only on an open latch.
    CHECK(set_count_step(0, 5).value == "5");
    CHECK(set_count_step(2, 5).act == cas_step::action::finish);
}
