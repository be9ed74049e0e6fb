// SPDX-License-Identifier: BSL-1.0
// The txn request body written as text matches Boost.JSON's serialization of the same ops.
#include "codec/json.hpp"
#include "codec/txn_body.hpp"
#include "support/catch.hpp"

#include <conclave/types.hpp>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace conclave;
using namespace conclave::codec;

namespace {

// The body as the client used to build it: a json::array of txn_op_to_json objects.
std::string via_json_tree(const std::vector<txn_op>& ops) {
    json::array a;
    for (const auto& op : ops)
        a.emplace_back(txn_op_to_json(op));
    return json::serialize(a);
}

} // namespace

TEST_CASE("txn_body: the same bytes as serializing the JSON objects", "[codec][txn]") {
    std::string every_byte;
    for (int c = 0; c < 256; ++c)
        every_byte += char(c);
    const std::vector<std::vector<txn_op>> cases{
        {},
        {txn_op::get("k")},
        {txn_op::set("k", "v", 7), txn_op::cas("k", "hello", 12, 3)},
        {txn_op::lock("a/b c", "sess", "v", lock_flag_value), txn_op::get("a/b c")},
        {txn_op::unlock("k", "sess", ""), txn_op::check_index("k", 18446744073709551615ULL)},
        {txn_op::check_session("k\"q\\", "s\n"), txn_op::check_not_exists("\t\b\f\r")},
        {txn_op::remove("k"), txn_op::remove_tree("p/"), txn_op::remove_cas("k", 9)},
        {txn_op::set(every_byte, every_byte, 1)},
        {txn_op::lock("caf\xc3\xa9 \xe2\x82\xac", "\x01\x1f\x7f", "x")},
    };
    for (const auto& ops : cases) {
        INFO(via_json_tree(ops));
        CHECK(txn_body(ops) == via_json_tree(ops));
    }
}

TEST_CASE("txn_body: an escape anywhere in a long string, at every offset", "[codec][txn]") {
    // Strings are scanned 8 bytes at a time: each special byte at each offset of words,
    // and of the tail shorter than a word.
    for (const char special : {'"', '\\', '\n', '\x01', '\x1f', '\x7f', '\x80', '\xff'}) {
        for (std::size_t length = 1; length <= 25; ++length) {
            for (std::size_t at = 0; at < length; ++at) {
                std::string key(length, 'k');
                key[at] = special;
                const std::vector<txn_op> ops{txn_op::set(key, key, 0)};
                INFO("length " << length << ", offset " << at << ", byte " << int(special));
                CHECK(txn_body(ops) == via_json_tree(ops));
            }
        }
    }
}

TEST_CASE("txn_body: strings of every length and two escapes", "[codec][txn]") {
    // The tail of a string shorter than a word is copied as the last word of the string,
    // over bytes already written: right only when none of that word needed an escape.
    for (std::size_t length = 0; length <= 25; ++length) {
        std::string plain;
        for (std::size_t i = 0; i < length; ++i)
            plain += char('a' + i % 26);
        std::vector<txn_op> ops{txn_op::lock(plain, plain, plain, 1)};
        INFO("length " << length);
        CHECK(txn_body(ops) == via_json_tree(ops));
        for (std::size_t a = 0; a < length; ++a) {
            for (std::size_t b = a; b < length; ++b) {
                std::string key = plain;
                key[a] = '"';
                key[b] = '\n';
                ops = {txn_op::check_session(key, key)};
                INFO("offsets " << a << " and " << b);
                CHECK(txn_body(ops) == via_json_tree(ops));
            }
        }
    }
}

TEST_CASE("txn_body: flags and indexes, Go's lock and semaphore flags among them", "[codec][txn]") {
    // The two flags Go's recipes write are copied as text: they and their neighbours must
    // read as to_chars() would write them.
    for (const std::uint64_t v :
         {std::uint64_t(1), std::uint64_t(9), std::uint64_t(10), std::uint64_t(12345),
          lock_flag_value - 1, lock_flag_value, lock_flag_value + 1, semaphore_flag_value - 1,
          semaphore_flag_value, semaphore_flag_value + 1, ~std::uint64_t(0)}) {
        const std::vector<txn_op> ops{txn_op::lock("k", "s", "", v), txn_op::cas("k", "v", v, v)};
        INFO(v);
        CHECK(txn_body(ops) == via_json_tree(ops));
    }
    const std::vector<txn_op> ops{txn_op::lock("k", "s", "", lock_flag_value)};
    CHECK(txn_body(ops) ==
          R"([{"KV":{"Verb":"lock","Key":"k","Flags":3304740253564472344,"Session":"s"}}])");
}

TEST_CASE("txn_body: each op's namespace and partition, else the transaction's, only when set",
          "[codec][txn]") {
    auto own = txn_op::set("k", "v");
    own.namespace_name = "team-b";
    own.partition = "west";
    std::vector<txn_op> ops{txn_op::get("a"), own};
    CHECK(txn_body(ops) == via_json_tree(ops)); // none on the first, its own on the second
    CHECK(txn_body({txn_op::get("a")}) == R"([{"KV":{"Verb":"get","Key":"a"}}])");
    CHECK(
        txn_body(ops, "team-a", "") ==
        R"([{"KV":{"Verb":"get","Key":"a","Namespace":"team-a"}},)"
        R"({"KV":{"Verb":"set","Key":"k","Value":"dg==","Namespace":"team-b","Partition":"west"}}])");
    CHECK(txn_body({txn_op::get("a")}, "", "p\"") ==
          R"([{"KV":{"Verb":"get","Key":"a","Partition":"p\""}}])"); // escaped as any string
}
