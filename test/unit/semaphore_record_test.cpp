// SPDX-License-Identifier: BSL-1.0
// The semaphore's .lock record: Go's JSON both ways, pruning, key joining, dead contender keys.
#include "recipes/semaphore/semaphore_record.hpp"
#include "support/catch.hpp"

using namespace conclave;
using conclave::detail::join_key;
using conclave::detail::semaphore_record;
using holders_t = std::map<std::string, std::uint32_t>;

TEST_CASE("the record encodes as Go's json.Marshal does", "[semaphore]") {
    semaphore_record r;
    r.limit = 3;
    CHECK(r.encode() == R"({"Limit":3,"Holders":{}})");
    r.holders = {{"b", 1}, {"a", 1}};
    CHECK(r.encode() == R"({"Limit":3,"Holders":{"a":true,"b":true}})");
}

TEST_CASE("the record decodes Go's JSON, case-insensitively", "[semaphore]") {
    auto r = semaphore_record::decode(R"({"limit":2,"holders":{"x":true,"y":false}})", 9);
    REQUIRE(r);
    CHECK(r->limit == 2);
    CHECK(r->holders == holders_t{{"x", 1}, {"y", 1}}); // membership is the key
    auto fresh = semaphore_record::decode("", 4);
    REQUIRE(fresh);
    CHECK(fresh->limit == 4);
    CHECK(fresh->holders.empty());
    auto null_holders = semaphore_record::decode(R"({"Limit":1,"Holders":null})", 1);
    REQUIRE(null_holders);
    CHECK(null_holders->holders.empty());
    CHECK_FALSE(semaphore_record::decode("{not json", 1));
    CHECK_FALSE(semaphore_record::decode(R"({"Limit":"two"})", 1));
}

TEST_CASE("a holder of many slots is written as its count, which Go cannot decode", "[semaphore]") {
    semaphore_record r;
    r.limit = 5;
    r.holders = {{"a", 1}, {"b", 3}};
    CHECK(r.used() == 4);
    CHECK(r.free() == 1);
    // Go decodes Holders into map[string]bool: a number fails its decode, so a Go peer
    // refuses to act instead of counting 3 slots as 1.
    CHECK(r.encode() == R"({"Limit":5,"Holders":{"a":true,"b":3}})");
    auto back = semaphore_record::decode(r.encode(), 9);
    REQUIRE(back);
    CHECK(back->holders == r.holders);
    r.holders["c"] = 4; // more than the limit, as a record written by hand may say
    CHECK(r.free() == 0);
    CHECK_FALSE(semaphore_record::decode(R"({"Limit":2,"Holders":{"a":0}})", 1));
    CHECK_FALSE(semaphore_record::decode(R"({"Limit":2,"Holders":{"a":-1}})", 1));
    CHECK_FALSE(semaphore_record::decode(R"({"Limit":2,"Holders":{"a":1.5}})", 1));
    CHECK_FALSE(semaphore_record::decode(R"({"Limit":2,"Holders":{"a":"x"}})", 1));
    CHECK_FALSE(semaphore_record::decode(R"({"Limit":2,"Holders":{"a":4294967296}})", 1));
}

TEST_CASE("holders without a live key under the prefix are pruned", "[semaphore]") {
    semaphore_record r;
    r.limit = 2;
    r.holders = {{"alive", 1}, {"dead", 1}};
    std::vector<kv_entry> entries(2);
    entries[0].key = "p/alive";
    entries[0].session = "alive";
    entries[1].key = "p/.lock";
    CHECK(r.prune(entries) == 1);
    CHECK(r.holders == holders_t{{"alive", 1}});
}

TEST_CASE("keys are joined like Go's path.Join", "[semaphore]") {
    CHECK(join_key("svc/render", ".lock") == "svc/render/.lock");
    CHECK(join_key("svc/render/", ".lock") == "svc/render/.lock");
    CHECK(join_key("svc/render//", "/abc") == "svc/render/abc");
    CHECK(join_key("svc", "") == "svc/");
}

TEST_CASE("only released contender keys named after a session are dead", "[semaphore]") {
    const std::string dead_a = "0b6b2e8c-5f5a-4c41-9d1e-1c3a9f0e7a10";
    const std::string dead_b = "9F2C1D3E-0000-4ABC-8DEF-0123456789AB";
    const std::string live = "1a2b3c4d-1111-2222-3333-444455556666";
    auto entry = [](std::string key, std::string session, std::uint64_t flags,
                    std::uint64_t index) {
        kv_entry e;
        e.key = std::move(key);
        e.session = std::move(session);
        e.flags = flags;
        e.modify_index = index;
        return e;
    };
    const std::vector<kv_entry> entries{
        entry("p/" + dead_a, "", semaphore_flag_value, 11),
        entry("p/" + dead_b, "", semaphore_flag_value, 12),
        entry("p/" + live, live, semaphore_flag_value, 13), // held: alive
        entry("p/.lock", "", semaphore_flag_value, 14),     // the record
        entry("p/2a2b3c4d-1111-2222-3333-444455556666", "", lock_flag_value,
              15),                                                  // other flags
        entry("p/3a2b3c4d-1111-2222-3333-444455556666", "", 0, 16), // no flags
        entry("p/notes", "", semaphore_flag_value, 17),             // not a session's name
        entry("p/x/" + dead_a, "", semaphore_flag_value, 18),       // nested
        entry("p/" + dead_a + "x", "", semaphore_flag_value, 19),   // too long
        entry("p/" + dead_a.substr(0, 35) + "g", "", semaphore_flag_value, 20), // not hex
        entry("p/4a2b3c4d-1111-2222-3333-444455556666", "", semaphore_flag_value,
              0), // no index known
    };
    auto dead = detail::dead_contenders("p", entries);
    REQUIRE(dead.size() == 2);
    CHECK(dead[0].key == "p/" + dead_a);
    CHECK(dead[0].modify_index == 11);
    CHECK(dead[1].key == "p/" + dead_b);
    CHECK(dead[1].modify_index == 12);
    CHECK(detail::dead_contenders("p/", entries).size() == 2); // Go's path.Join rules
    CHECK(detail::dead_contenders("p", entries, 1).size() == 1);
    CHECK(detail::dead_contenders("q", entries).empty()); // (other keys)
}

namespace {

kv_entry contender(std::string session, std::uint64_t create_index) {
    kv_entry e;
    e.key = "p/" + session;
    e.session = session;
    e.flags = conclave::semaphore_flag_value;
    e.create_index = create_index;
    e.modify_index = create_index;
    return e;
}

} // namespace

TEST_CASE("fair mode: the first in line are the oldest waiting contenders, holders left out",
          "[semaphore]") {
    using conclave::detail::first_in_line;
    semaphore_record r;
    r.limit = 2;
    r.holders = {{"held", 1}};
    // Listed in key order (as Consul lists them), not in arrival order.
    std::vector<kv_entry> entries{contender("a-late", 40), contender("b-first", 10),
                                  contender("c-second", 20), contender("held", 5)};
    entries.push_back(contender("p-dead", 1));
    entries.back().session.clear(); // released by its ended session: nobody waits there
    kv_entry lock;
    lock.key = "p/.lock";
    lock.flags = conclave::semaphore_flag_value;
    lock.create_index = 1;
    entries.push_back(lock);
    kv_entry nested = contender("x", 2);
    nested.key = "p/x/y"; // a nested key, not a contender key
    entries.push_back(nested);
    kv_entry foreign = contender("f", 3);
    foreign.flags = 0; // someone else's key
    entries.push_back(foreign);

    CHECK(first_in_line("p", entries, r, 1) == std::vector<std::string>{"b-first"});
    CHECK(first_in_line("p", entries, r, 2) == std::vector<std::string>{"b-first", "c-second"});
    CHECK(first_in_line("p/", entries, r, 9) ==
          std::vector<std::string>{"b-first", "c-second", "a-late"});
    CHECK(first_in_line("p", entries, r, 0).empty());
}

TEST_CASE("fair mode: the line stops at the first contender that asks for more than is free",
          "[semaphore]") {
    using conclave::detail::first_in_line;
    semaphore_record r;
    r.limit = 4;
    const std::vector<kv_entry> entries{contender("a", 1), contender("b", 2), contender("c", 3)};
    auto weight = [](const std::string& s) -> std::uint32_t { return s == "b" ? 3 : 1; };
    CHECK(first_in_line("p", entries, r, 2, weight) == std::vector<std::string>{"a"});
    CHECK(first_in_line("p", entries, r, 4, weight) == std::vector<std::string>{"a", "b"});
    CHECK(first_in_line("p", entries, r, 5, weight) == std::vector<std::string>{"a", "b", "c"});
    CHECK(first_in_line("p", entries, r, 2) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("fair mode: a key under another session's name is nobody's place in line",
          "[semaphore]") {
    semaphore_record r;
    r.limit = 1;
    auto odd = contender("a", 1);
    odd.session = "b"; // held by b, but named after a
    CHECK(conclave::detail::first_in_line("p", {odd, contender("c", 2)}, r, 1) ==
          std::vector<std::string>{"c"});
}
