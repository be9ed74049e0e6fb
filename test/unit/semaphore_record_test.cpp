// SPDX-License-Identifier: BSL-1.0
// The semaphore's .lock record: Go's JSON both ways, pruning, key joining.
#include "recipes/semaphore/semaphore_record.hpp"
#include "support/catch.hpp"

using namespace conclave;
using conclave::detail::join_key;
using conclave::detail::semaphore_record;

TEST_CASE("the record encodes as Go's json.Marshal does", "[semaphore]") {
    semaphore_record r;
    r.limit = 3;
    CHECK(r.encode() == R"({"Limit":3,"Holders":{}})");
    r.holders = {"b", "a"};
    CHECK(r.encode() == R"({"Limit":3,"Holders":{"a":true,"b":true}})");
}

TEST_CASE("the record decodes Go's JSON, case-insensitively", "[semaphore]") {
    auto r = semaphore_record::decode(R"({"limit":2,"holders":{"x":true,"y":false}})", 9);
    REQUIRE(r);
    CHECK(r->limit == 2);
    CHECK(r->holders == std::set<std::string>{"x", "y"}); // membership is the key
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

TEST_CASE("holders without a live key under the prefix are pruned", "[semaphore]") {
    semaphore_record r;
    r.limit = 2;
    r.holders = {"alive", "dead"};
    std::vector<kv_entry> entries(2);
    entries[0].key = "p/alive";
    entries[0].session = "alive";
    entries[1].key = "p/.lock";
    CHECK(r.prune(entries) == 1);
    CHECK(r.holders == std::set<std::string>{"alive"});
}

TEST_CASE("keys are joined like Go's path.Join", "[semaphore]") {
    CHECK(join_key("svc/render", ".lock") == "svc/render/.lock");
    CHECK(join_key("svc/render/", ".lock") == "svc/render/.lock");
    CHECK(join_key("svc/render//", "/abc") == "svc/render/abc");
    CHECK(join_key("svc", "") == "svc/");
}
