// SPDX-License-Identifier: BSL-1.0
// JSON shapes of Consul's KV pairs, sessions and transaction operations, and the named
// constructors of txn_op.
#include "codec/json.hpp"
#include "support/catch.hpp"

#include <conclave/types.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdint>
#include <set>
#include <string>

using namespace conclave;
using namespace conclave::codec;
using namespace std::chrono_literals;

namespace {

std::string dump(const json::object& o) {
    return json::serialize(o);
}

// Parses `text` as a KV pair; nullopt when kv_entry_from_json refuses it.
std::optional<kv_entry> kv_from(std::string_view text) {
    kv_entry e;
    if (!kv_entry_from_json(json::parse(text), e))
        return std::nullopt;
    return e;
}

std::optional<session_entry> session_from(std::string_view text) {
    session_entry s;
    if (!session_entry_from_json(json::parse(text), s))
        return std::nullopt;
    return s;
}

kv_entry sample_entry() {
    kv_entry e;
    e.key = "app/config";
    e.value = "hello";
    e.flags = 42;
    e.lock_index = 3;
    e.session = "adf4238a-882b-9ddc-4a9d-5b6758e4159e";
    e.create_index = 100;
    e.modify_index = 200;
    return e;
}

constexpr kv_verb all_verbs[] = {
    kv_verb::set,         kv_verb::cas,           kv_verb::lock,
    kv_verb::unlock,      kv_verb::get,           kv_verb::get_tree,
    kv_verb::check_index, kv_verb::check_session, kv_verb::check_not_exists,
    kv_verb::delete_key,  kv_verb::delete_tree,   kv_verb::delete_cas,
};

} // namespace

// --- kv_entry_to_json --------------------------------------------------------------------

TEST_CASE("kv_entry_to_json: Consul's field order and values", "[codec][json]") {
    CHECK(dump(kv_entry_to_json(sample_entry())) ==
          R"({"LockIndex":3,"Key":"app/config","Flags":42,"Value":"aGVsbG8=",)"
          R"("Session":"adf4238a-882b-9ddc-4a9d-5b6758e4159e","CreateIndex":100,)"
          R"("ModifyIndex":200})");
}

TEST_CASE("kv_entry_to_json: empty value is null, no session omits Session", "[codec][json]") {
    kv_entry e;
    e.key = "k";
    e.create_index = 7;
    e.modify_index = 7;
    CHECK(dump(kv_entry_to_json(e)) ==
          R"({"LockIndex":0,"Key":"k","Flags":0,"Value":null,"CreateIndex":7,"ModifyIndex":7})");
    const auto o = kv_entry_to_json(e);
    CHECK(o.at("Value").is_null());
    CHECK_FALSE(o.contains("Session"));
}

TEST_CASE("kv_entry_to_json: with_value=false writes null", "[codec][json]") {
    const auto o = kv_entry_to_json(sample_entry(), false);
    CHECK(o.at("Value").is_null());
    CHECK(o.at("Key").as_string() == "app/config");
    CHECK(o.at("Session").as_string() == "adf4238a-882b-9ddc-4a9d-5b6758e4159e");
    CHECK(o.size() == 7);
}

TEST_CASE("kv_entry_to_json: 64-bit flags and binary values are exact", "[codec][json]") {
    kv_entry e;
    e.key = "k";
    e.value = std::string("\0\xff", 2);
    e.flags = 18446744073709551615ULL;
    CHECK(dump(kv_entry_to_json(e)) ==
          R"({"LockIndex":0,"Key":"k","Flags":18446744073709551615,"Value":"AP8=",)"
          R"("CreateIndex":0,"ModifyIndex":0})");
    e.flags = semaphore_flag_value;
    CHECK(dump(kv_entry_to_json(e)).find(R"("Flags":16210313421097356768,)") != std::string::npos);
}

// --- kv_entry_from_json ------------------------------------------------------------------

TEST_CASE("kv_entry_from_json: a Consul KVPair", "[codec][json]") {
    auto e = kv_from(R"({"LockIndex":3,"Key":"app/config","Flags":42,"Value":"aGVsbG8=",
        "Session":"adf4238a-882b-9ddc-4a9d-5b6758e4159e","CreateIndex":100,"ModifyIndex":200})");
    REQUIRE(e);
    CHECK(*e == sample_entry());
}

TEST_CASE("kv_entry_from_json: round trip of kv_entry_to_json", "[codec][json]") {
    kv_entry e = sample_entry();
    e.value = std::string("bin\0ary\xff", 8);
    e.flags = lock_flag_value;
    auto back = kv_from(dump(kv_entry_to_json(e)));
    REQUIRE(back);
    CHECK(*back == e);

    kv_entry empty;
    empty.key = "empty";
    back = kv_from(dump(kv_entry_to_json(empty)));
    REQUIRE(back);
    CHECK(*back == empty);
}

TEST_CASE("kv_entry_from_json: full uint64 flags without loss", "[codec][json]") {
    auto e = kv_from(R"({"Key":"k","Flags":18446744073709551615,"Value":null})");
    REQUIRE(e);
    CHECK(e->flags == 18446744073709551615ULL);

    e = kv_from(R"({"Key":"k","Flags":16210313421097356768,"Value":null})");
    REQUIRE(e);
    CHECK(e->flags == 16210313421097356768ULL);
    CHECK(e->flags == semaphore_flag_value);

    e = kv_from(R"({"Key":"k","Flags":3304740253564472344,"Value":null})");
    REQUIRE(e);
    CHECK(e->flags == lock_flag_value);

    e = kv_from(R"({"Key":"k","CreateIndex":9223372036854775808,"ModifyIndex":1})");
    REQUIRE(e);
    CHECK(e->create_index == 9223372036854775808ULL);
}

TEST_CASE("kv_entry_from_json: null and missing fields are empty", "[codec][json]") {
    kv_entry e = sample_entry(); // previous content must not leak into the result
    REQUIRE(kv_entry_from_json(json::parse(R"({"Key":"k","Value":null,"Session":null})"), e));
    CHECK(e.key == "k");
    CHECK(e.value.empty());
    CHECK(e.session.empty());
    CHECK(e.flags == 0);
    CHECK(e.lock_index == 0);
    CHECK(e.create_index == 0);
    CHECK(e.modify_index == 0);

    auto empty_value = kv_from(R"({"Key":"k","Value":""})");
    REQUIRE(empty_value);
    CHECK(empty_value->value.empty());
}

TEST_CASE("kv_entry_from_json: bad base64 is refused", "[codec][json]") {
    CHECK_FALSE(kv_from(R"({"Key":"k","Value":"not base64!"})"));
    CHECK_FALSE(kv_from(R"({"Key":"k","Value":"aGVsbG8"})"));
    CHECK_FALSE(kv_from(R"({"Key":"k","Value":"aG==bG8="})"));
}

TEST_CASE("kv_entry_from_json: wrong types are refused", "[codec][json]") {
    CHECK_FALSE(kv_from(R"([])"));
    CHECK_FALSE(kv_from(R"("k")"));
    CHECK_FALSE(kv_from(R"(null)"));
    CHECK_FALSE(kv_from(R"({"Key":5})"));
    CHECK_FALSE(kv_from(R"({"Key":"k","Value":5})"));
    CHECK_FALSE(kv_from(R"({"Key":"k","Value":["aGVsbG8="]})"));
    CHECK_FALSE(kv_from(R"({"Key":"k","Session":true})"));
    CHECK_FALSE(kv_from(R"({"Key":"k","Flags":"42"})"));
    CHECK_FALSE(kv_from(R"({"Key":"k","Flags":-1})"));
    CHECK_FALSE(kv_from(R"({"Key":"k","Flags":1.5})"));
    CHECK_FALSE(kv_from(R"({"Key":"k","Flags":18446744073709551616})")); // beyond uint64
    CHECK_FALSE(kv_from(R"({"Key":"k","LockIndex":{}})"));
    CHECK_FALSE(kv_from(R"({"Key":"k","CreateIndex":false})"));
    CHECK_FALSE(kv_from(R"({"Key":"k","ModifyIndex":"1"})"));
}

TEST_CASE("json_u64: unsigned 64-bit numbers only", "[codec][json]") {
    CHECK(json_u64(json::parse("0")) == std::uint64_t{0});
    CHECK(json_u64(json::parse("42")) == std::uint64_t{42});
    CHECK(json_u64(json::parse("18446744073709551615")) == 18446744073709551615ULL);
    CHECK_FALSE(json_u64(json::parse("-1")));
    CHECK_FALSE(json_u64(json::parse("1.0")));
    CHECK_FALSE(json_u64(json::parse("\"1\"")));
    CHECK_FALSE(json_u64(json::parse("null")));
}

// --- session_entry_from_json -------------------------------------------------------------

TEST_CASE("session_entry_from_json: a Consul SessionEntry", "[codec][json]") {
    auto s = session_from(R"({
        "ID": "adf4238a-882b-9ddc-4a9d-5b6758e4159e",
        "Name": "test-session",
        "Node": "node1",
        "LockDelay": 15000000000,
        "Behavior": "release",
        "TTL": "30s",
        "NodeChecks": ["serfHealth", "mem"],
        "ServiceChecks": [{"ID": "redis", "Namespace": ""}, {"ID": "web", "Namespace": "ns1"}],
        "CreateIndex": 1086449,
        "ModifyIndex": 1086450
    })");
    REQUIRE(s);
    CHECK(s->id == "adf4238a-882b-9ddc-4a9d-5b6758e4159e");
    CHECK(s->name == "test-session");
    CHECK(s->node == "node1");
    CHECK(s->lock_delay == 15s);
    CHECK(s->behavior == session_behavior::release);
    CHECK(s->ttl_text == "30s");
    CHECK(s->ttl == 30s);
    CHECK(s->node_checks == std::vector<std::string>{"serfHealth", "mem"});
    REQUIRE(s->service_checks.size() == 2);
    CHECK(s->service_checks[0] == service_check{"redis", ""});
    CHECK(s->service_checks[1] == service_check{"web", "ns1"});
    CHECK(s->create_index == 1086449);
    CHECK(s->modify_index == 1086450);
}

TEST_CASE("session_entry_from_json: LockDelay is integer nanoseconds", "[codec][json]") {
    auto s = session_from(R"({"ID":"a","LockDelay":1500000})");
    REQUIRE(s);
    CHECK(s->lock_delay == 1500us);
    s = session_from(R"({"ID":"a","LockDelay":0})");
    REQUIRE(s);
    CHECK(s->lock_delay == 0ns);
    s = session_from(R"({"ID":"a","LockDelay":null})");
    REQUIRE(s);
    CHECK(s->lock_delay == 0ns);
    s = session_from(R"({"ID":"a"})");
    REQUIRE(s);
    CHECK(s->lock_delay == 0ns);
    CHECK_FALSE(session_from(R"({"ID":"a","LockDelay":"15s"})"));
    CHECK_FALSE(session_from(R"({"ID":"a","LockDelay":1.5})"));
}

TEST_CASE("session_entry_from_json: TTL text is parsed", "[codec][json]") {
    auto s = session_from(R"({"ID":"a","TTL":"1m30s"})");
    REQUIRE(s);
    CHECK(s->ttl_text == "1m30s");
    CHECK(s->ttl == 90s);
    s = session_from(R"({"ID":"a","TTL":"0.5s"})");
    REQUIRE(s);
    CHECK(s->ttl == 500ms);
    s = session_from(R"({"ID":"a","TTL":""})");
    REQUIRE(s);
    CHECK(s->ttl_text.empty());
    CHECK(s->ttl == 0ns);
    CHECK_FALSE(session_from(R"({"ID":"a","TTL":"thirty seconds"})"));
    CHECK_FALSE(session_from(R"({"ID":"a","TTL":"30"})"));
    CHECK_FALSE(session_from(R"({"ID":"a","TTL":30})"));
}

TEST_CASE("session_entry_from_json: Behavior", "[codec][json]") {
    auto s = session_from(R"({"ID":"a","Behavior":"delete"})");
    REQUIRE(s);
    CHECK(s->behavior == session_behavior::delete_keys);
    s = session_from(R"({"ID":"a","Behavior":"release"})");
    REQUIRE(s);
    CHECK(s->behavior == session_behavior::release);
    s = session_from(R"({"ID":"a"})");
    REQUIRE(s);
    CHECK(s->behavior == session_behavior::release);
    CHECK_FALSE(session_from(R"({"ID":"a","Behavior":1})"));
}

TEST_CASE("session_entry_from_json: null and empty check lists", "[codec][json]") {
    session_entry s;
    s.node_checks = {"stale"};
    s.service_checks = {{"stale", ""}};
    s.ttl = 5s;
    s.lock_delay = 5s;
    s.behavior = session_behavior::delete_keys;
    REQUIRE(session_entry_from_json(
        json::parse(R"({"ID":"b","NodeChecks":null,"ServiceChecks":null})"), s));
    CHECK(s.id == "b");
    CHECK(s.node_checks.empty());
    CHECK(s.service_checks.empty());
    CHECK(s.ttl == 0ns);
    CHECK(s.lock_delay == 0ns);
    CHECK(s.behavior == session_behavior::release);

    auto e = session_from(R"({"ID":"c","NodeChecks":[],"ServiceChecks":[]})");
    REQUIRE(e);
    CHECK(e->node_checks.empty());
    CHECK(e->service_checks.empty());

    e = session_from(R"({"ID":"d","ServiceChecks":[{"ID":"only-id"}]})");
    REQUIRE(e);
    REQUIRE(e->service_checks.size() == 1);
    CHECK(e->service_checks[0] == service_check{"only-id", ""});
}

TEST_CASE("session_entry_from_json: wrong types are refused", "[codec][json]") {
    CHECK_FALSE(session_from(R"([])"));
    CHECK_FALSE(session_from(R"({"ID":1})"));
    CHECK_FALSE(session_from(R"({"ID":"a","Name":{}})"));
    CHECK_FALSE(session_from(R"({"ID":"a","Node":false})"));
    CHECK_FALSE(session_from(R"({"ID":"a","NodeChecks":"serfHealth"})"));
    CHECK_FALSE(session_from(R"({"ID":"a","NodeChecks":[1]})"));
    CHECK_FALSE(session_from(R"({"ID":"a","ServiceChecks":["redis"]})"));
    CHECK_FALSE(session_from(R"({"ID":"a","ServiceChecks":[{"ID":5}]})"));
    CHECK_FALSE(session_from(R"({"ID":"a","ServiceChecks":[{"ID":"x","Namespace":1}]})"));
    CHECK_FALSE(session_from(R"({"ID":"a","CreateIndex":-5})"));
    CHECK_FALSE(session_from(R"({"ID":"a","ModifyIndex":"5"})"));
}

// --- kv verbs and txn ops ----------------------------------------------------------------

TEST_CASE("kv_verb_name / kv_verb_from_name round trip for all 12 verbs", "[codec][json]") {
    std::set<std::string_view> names;
    for (kv_verb v : all_verbs) {
        const std::string_view name = kv_verb_name(v);
        INFO(name);
        CHECK(kv_verb_from_name(name) == v);
        names.insert(name);
    }
    CHECK(names.size() == 12);
    CHECK(names == std::set<std::string_view>{"set", "cas", "lock", "unlock", "get", "get-tree",
                                              "check-index", "check-session", "check-not-exists",
                                              "delete", "delete-tree", "delete-cas"});
    CHECK(kv_verb_name(kv_verb::delete_key) == "delete");
    CHECK(kv_verb_name(kv_verb::get_tree) == "get-tree");
    CHECK(kv_verb_name(kv_verb::check_not_exists) == "check-not-exists");
}

TEST_CASE("kv_verb_from_name: unknown names", "[codec][json]") {
    CHECK_FALSE(kv_verb_from_name(""));
    CHECK_FALSE(kv_verb_from_name("Set"));
    CHECK_FALSE(kv_verb_from_name("get_tree"));
    CHECK_FALSE(kv_verb_from_name("delete_key"));
    CHECK_FALSE(kv_verb_from_name("remove"));
    CHECK_FALSE(kv_verb_from_name("set "));
}

TEST_CASE("txn_op named constructors", "[codec][txn]") {
    auto op = txn_op::set("k", "v", 7);
    CHECK(op.verb == kv_verb::set);
    CHECK(op.key == "k");
    CHECK(op.value == "v");
    CHECK(op.flags == 7);
    CHECK(op.index == 0);
    CHECK(op.session.empty());
    CHECK(txn_op::set("k", "v").flags == 0);

    op = txn_op::cas("k", "v", 12, 3);
    CHECK(op.verb == kv_verb::cas);
    CHECK(op.key == "k");
    CHECK(op.value == "v");
    CHECK(op.index == 12);
    CHECK(op.flags == 3);
    CHECK(op.session.empty());

    op = txn_op::lock("k", "sess", "v", 9);
    CHECK(op.verb == kv_verb::lock);
    CHECK(op.key == "k");
    CHECK(op.session == "sess");
    CHECK(op.value == "v");
    CHECK(op.flags == 9);
    CHECK(op.index == 0);

    op = txn_op::unlock("k", "sess", "v");
    CHECK(op.verb == kv_verb::unlock);
    CHECK(op.key == "k");
    CHECK(op.session == "sess");
    CHECK(op.value == "v");
    CHECK(op.flags == 0);

    op = txn_op::get("k");
    CHECK(op.verb == kv_verb::get);
    CHECK(op.key == "k");
    CHECK(op.value.empty());
    CHECK(op.flags == 0);
    CHECK(op.index == 0);
    CHECK(op.session.empty());

    op = txn_op::get_tree("p/");
    CHECK(op.verb == kv_verb::get_tree);
    CHECK(op.key == "p/");

    op = txn_op::check_index("k", 44);
    CHECK(op.verb == kv_verb::check_index);
    CHECK(op.key == "k");
    CHECK(op.index == 44);

    op = txn_op::check_session("k", "sess");
    CHECK(op.verb == kv_verb::check_session);
    CHECK(op.key == "k");
    CHECK(op.session == "sess");
    CHECK(op.index == 0);

    op = txn_op::check_not_exists("k");
    CHECK(op.verb == kv_verb::check_not_exists);
    CHECK(op.key == "k");

    op = txn_op::remove("k");
    CHECK(op.verb == kv_verb::delete_key);
    CHECK(op.key == "k");
    CHECK(op.index == 0);

    op = txn_op::remove_tree("p/");
    CHECK(op.verb == kv_verb::delete_tree);
    CHECK(op.key == "p/");

    op = txn_op::remove_cas("k", 55);
    CHECK(op.verb == kv_verb::delete_cas);
    CHECK(op.key == "k");
    CHECK(op.index == 55);
    CHECK(op.value.empty());
    CHECK(op.session.empty());
}

TEST_CASE("txn_op_to_json: only the fields an op carries", "[codec][txn]") {
    CHECK(dump(txn_op_to_json(txn_op::get("k"))) == R"({"KV":{"Verb":"get","Key":"k"}})");
    CHECK(dump(txn_op_to_json(txn_op::set("k", "v"))) ==
          R"({"KV":{"Verb":"set","Key":"k","Value":"dg=="}})");
    CHECK(dump(txn_op_to_json(txn_op::set("k", "", 0))) == R"({"KV":{"Verb":"set","Key":"k"}})");
    CHECK(dump(txn_op_to_json(txn_op::set("k", "v", 7))) ==
          R"({"KV":{"Verb":"set","Key":"k","Value":"dg==","Flags":7}})");
    CHECK(dump(txn_op_to_json(txn_op::cas("k", "hello", 12, 3))) ==
          R"({"KV":{"Verb":"cas","Key":"k","Value":"aGVsbG8=","Flags":3,"Index":12}})");
    CHECK(dump(txn_op_to_json(txn_op::lock("k", "sess", "v"))) ==
          R"({"KV":{"Verb":"lock","Key":"k","Value":"dg==","Session":"sess"}})");
    CHECK(dump(txn_op_to_json(txn_op::unlock("k", "sess", ""))) ==
          R"({"KV":{"Verb":"unlock","Key":"k","Session":"sess"}})");
    CHECK(dump(txn_op_to_json(txn_op::get_tree("p/"))) ==
          R"({"KV":{"Verb":"get-tree","Key":"p/"}})");
    CHECK(dump(txn_op_to_json(txn_op::check_index("k", 9))) ==
          R"({"KV":{"Verb":"check-index","Key":"k","Index":9}})");
    CHECK(dump(txn_op_to_json(txn_op::check_session("k", "sess"))) ==
          R"({"KV":{"Verb":"check-session","Key":"k","Session":"sess"}})");
    CHECK(dump(txn_op_to_json(txn_op::check_not_exists("k"))) ==
          R"({"KV":{"Verb":"check-not-exists","Key":"k"}})");
    CHECK(dump(txn_op_to_json(txn_op::remove("k"))) == R"({"KV":{"Verb":"delete","Key":"k"}})");
    CHECK(dump(txn_op_to_json(txn_op::remove_tree("p/"))) ==
          R"({"KV":{"Verb":"delete-tree","Key":"p/"}})");
    CHECK(dump(txn_op_to_json(txn_op::remove_cas("k", 55))) ==
          R"({"KV":{"Verb":"delete-cas","Key":"k","Index":55}})");
}

TEST_CASE("txn_op_to_json: 64-bit flags and binary values", "[codec][txn]") {
    const auto o =
        txn_op_to_json(txn_op::lock("k", "sess", std::string("\0\xff", 2), semaphore_flag_value));
    const auto& kv = o.at("KV").as_object();
    CHECK(kv.at("Value").as_string() == "AP8=");
    REQUIRE(kv.at("Flags").is_uint64());
    CHECK(kv.at("Flags").as_uint64() == 16210313421097356768ULL);
    CHECK(dump(o).find(R"("Flags":16210313421097356768)") != std::string::npos);
}
