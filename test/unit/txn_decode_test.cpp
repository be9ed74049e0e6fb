// The dev agent's fast /v1/txn body decoder against the general path (gojson::decode_first
// + decode_ops, which follow Go): whenever the fast path takes a body, both give the same
// operations; it takes the bodies clients send, and leaves every unusual one to the general
// path.
#include "codec/txn_body.hpp"
#include "dev/gojson.hpp"
#include "dev/txn_fast_decode.hpp"
#include "golden_steps.hpp"

#include <conclave/types.hpp>

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

using namespace conclave;
using namespace conclave::dev::detail;
namespace json = boost::json;

namespace {

struct general_result {
    bool ok = false; // decoded without an error
    std::vector<decoded_op> ops;
    bool has_nil = false;
};

general_result general(std::string_view body) {
    general_result r;
    auto parsed = gojson::decode_first(body);
    if (!parsed.v)
        return r;
    r.ok = decode_ops(*parsed.v, r.ops, r.has_nil).empty();
    return r;
}

using decoder = std::optional<std::vector<decoded_op>> (*)(std::string_view);

// Whether a fast decoder took the body; when it did, the general path must agree exactly.
bool agrees(std::string_view body, decoder decode) {
    auto fast = decode(body);
    if (!fast)
        return false;
    const general_result g = general(body);
    INFO("body: " << body);
    REQUIRE(g.ok);
    REQUIRE_FALSE(g.has_nil);
    REQUIRE(fast->size() == g.ops.size());
    for (std::size_t i = 0; i < fast->size(); ++i) {
        const decoded_op& f = (*fast)[i];
        const decoded_op& o = g.ops[i];
        INFO("op " << i);
        CHECK(f.present == o.present);
        CHECK(f.verb_of_other == o.verb_of_other);
        CHECK(f.op.is_kv == o.op.is_kv);
        CHECK(f.op.family == o.op.family);
        CHECK(f.op.verb == o.op.verb);
        CHECK(f.op.entry.key == o.op.entry.key);
        CHECK(f.op.entry.value == o.op.entry.value);
        CHECK(f.op.entry.flags == o.op.entry.flags);
        CHECK(f.op.entry.modify_index == o.op.entry.modify_index);
        CHECK(f.op.entry.session == o.op.entry.session);
        CHECK(f.op.entry.lock_index == o.op.entry.lock_index);
        CHECK(f.op.entry.create_index == o.op.entry.create_index);
    }
    return true;
}

bool fast_agrees(std::string_view body) {
    return agrees(body, txn_fast_decode);
}

// The compact scanner takes a subset of what the whole fast path takes.
bool compact_agrees(std::string_view body) {
    if (!agrees(body, txn_compact_decode))
        return false;
    INFO("body: " << body);
    CHECK(txn_fast_decode(body));
    return true;
}

const std::string sess = "adf4238a-882b-9ddc-4a9d-5b6758e4159e";

// Bodies as conclave's client writes them.
std::vector<std::string> client_bodies() {
    const std::vector<std::vector<txn_op>> cases{
        {txn_op::get("k")},
        {txn_op::set("k", "v", 7), txn_op::cas("k", "hello", 12, 3)},
        {txn_op::check_not_exists("service/x/lock"),
         txn_op::lock("service/x/lock", sess, "holder", lock_flag_value),
         txn_op::get("service/x/lock")},
        {txn_op::unlock("service/x/lock", sess, ""),
         txn_op::check_index("k", 18446744073709551615ULL)},
        {txn_op::check_session("k", sess), txn_op::remove("k"), txn_op::remove_tree("p/"),
         txn_op::remove_cas("k", 9)},
        {txn_op::lock("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", sess, std::string(3000, 'x'))},
        {txn_op::set("k", std::string("\0\x01\xff\"\\", 5), 0)},
        {txn_op::get("")},
    };
    std::vector<std::string> bodies;
    for (const auto& ops : cases)
        bodies.push_back(codec::txn_body(ops));
    return bodies;
}

// Bodies as Go's api.Txn marshals api.TxnOps: every family, nil ones as null, a nil Value
// as null, zero Flags and Index, with json.Encoder's newline at the end.
const std::vector<std::string> go_bodies{
    R"([{"KV":{"Verb":"lock","Key":"a","Value":"dGVzdA==","Flags":0,"Index":0,"Session":")" + sess +
        R"("},"Node":null,"Service":null,"Check":null},)"
        R"({"KV":{"Verb":"get","Key":"a","Value":null,"Flags":0,"Index":0,"Session":""},)"
        R"("Node":null,"Service":null,"Check":null}])"
        "\n",
    R"([{"KV":{"Verb":"delete-cas","Key":"a","Value":null,"Flags":0,"Index":42,"Session":""},)"
    R"("Node":null,"Service":null,"Check":null}])",
};

std::string kv(std::string_view fields) {
    return R"([{"KV":{)" + std::string(fields) + "}}]";
}

} // namespace

TEST_CASE("txn fast decode: takes what clients send, as the general path reads it",
          "[agent][txn]") {
    for (const auto& body : client_bodies()) {
        if (body.find('\\') != std::string::npos) { // escapes go the general way
            CHECK_FALSE(txn_fast_decode(body));
            continue;
        }
        CHECK(fast_agrees(body));
    }
    for (const auto& body : go_bodies)
        CHECK(fast_agrees(body));

    const std::vector<std::string> taken{
        kv(R"("Verb":"set","Key":"k","Value":"","Flags":0,"Index":0,"Session":"")"),
        kv(R"("Session":"s","Index":5,"Flags":18446744073709551615,"Value":"AA==",)"
           R"("Key":"k","Verb":"cas")"),
        kv(""),                                         // an empty KV: an op with no verb
        kv(R"("Verb":"get","Key":"k","Session":null)"), // a null field changes nothing
        kv(R"("Verb":"nope","Key":"k")"),               // unknown verbs are the store's
        " \t\r\n" + kv(R"("Verb":"get","Key":"k")") + " \n",
        kv(R"("Verb":"get","Key":"k")") + "garbage", // json.Decoder stops after the ]
        kv(R"("Verb":"get","Key":"k")") + "[",
        kv(R"("Verb":"get","Key":"k")") + "\xff",
        R"([{"Check":null,"KV":{"Verb":"get","Key":"k"},"Node":null}])",
        "[ { \"KV\" : { \"Verb\" : \"get\" , \"Key\" : \"k\" } } , {\"KV\":{\"Key\":\"\x7f\"}} ]",
        kv("\"Key\":\"\x7f\xc2\x80\xef\xbf\xbf\xf4\x8f\xbf\xbf\""),
    };
    for (const auto& body : taken)
        CHECK(fast_agrees(body));
    // Bytes after the array are never read, a backslash among them too.
    CHECK(fast_agrees(kv(R"("Verb":"get","Key":"k")") + "\\"));
}

TEST_CASE("txn fast decode: leaves unusual bodies to the general path", "[agent][txn]") {
    std::string deep = std::string(40, '[') + std::string(40, ']');
    std::string deep_kv = R"([{"KV":{"Verb":"get","Key":"k","Value":)" + std::string(40, '[') +
                          std::string(40, ']') + "}}]";
    const std::vector<std::string> declined{
        // escapes anywhere
        kv(R"("Verb":"get","Key":"\u00e9")"),
        kv(R"("Verb":"get","Key":"\ud800")"),
        kv(R"("Verb":"get","Key":"a\/b")"),
        kv(R"("Verb":"get","K\u0065y":"k")"),
        // key spellings Go matches case-insensitively
        R"([{"kv":{"Verb":"get","Key":"k"}}])",
        R"([{"Kv":{"Verb":"get","Key":"k"}}])",
        kv(R"("verb":"get","Key":"k")"),
        kv(R"("Verb":"get","KEY":"k")"),
        kv(R"("Verb":"get","Key":"k","session":"s")"),
        // duplicates
        kv(R"("Verb":"get","Key":"k","Key":"j")"),
        kv(R"("Verb":"get","Verb":"set","Key":"k")"),
        R"([{"KV":{"Verb":"get","Key":"k"},"KV":{"Verb":"set","Key":"k"}}])",
        R"([{"KV":{"Verb":"get","Key":"k"},"Node":null,"Node":null}])",
        // nulls elsewhere
        "null",
        "[null]",
        R"([{"KV":{"Verb":"get","Key":"k"}},null])",
        R"([{"KV":null}])",
        R"([{"KV":{"Verb":"get","Key":"k"},"KV":null}])",
        // numbers Go's ParseUint refuses, or other types
        kv(R"("Verb":"get","Key":"k","Flags":-1)"),
        kv(R"("Verb":"get","Key":"k","Flags":-0)"),
        kv(R"("Verb":"get","Key":"k","Index":1.0)"),
        kv(R"("Verb":"get","Key":"k","Index":1e2)"),
        kv(R"("Verb":"get","Key":"k","Index":1E0)"),
        kv(R"("Verb":"get","Key":"k","Index":18446744073709551616)"),
        kv(R"("Verb":"get","Key":"k","Flags":"1")"),
        kv(R"("Verb":"get","Key":"k","Flags":true)"),
        kv(R"("Verb":1,"Key":"k")"),
        kv(R"("Verb":"get","Key":["k"])"),
        kv(R"("Verb":"get","Key":{"k":1})"),
        kv(R"("Verb":"get","Key":false)"),
        // Value as an array of bytes, or bad base64
        kv(R"("Verb":"set","Key":"k","Value":[1,2,3])"),
        kv(R"("Verb":"set","Key":"k","Value":[])"),
        kv(R"("Verb":"set","Key":"k","Value":"dGVzdA")"),
        kv(R"("Verb":"set","Key":"k","Value":"dGVzdA=")"),
        kv(R"("Verb":"set","Key":"k","Value":"!!!!")"),
        kv(R"("Verb":"set","Key":"k","Value":"dGVz dA==")"),
        // unknown fields, other families
        kv(R"("Verb":"get","Key":"k","Namespace":"default")"),
        kv(R"("Verb":"get","Key":"k","Extra":1)"),
        R"([{"KV":{"Verb":"get","Key":"k"},"Other":1}])",
        R"([{"Node":{"Verb":"get","Node":{"Node":"n"}}}])",
        R"([{"Service":{"Verb":"get","Node":"n","Service":{"ID":"s"}}}])",
        R"([{"Check":{"Verb":"get","Check":{"Node":"n","CheckID":"c"}}}])",
        R"([{"KV":{"Verb":"get","Key":"k"},"Check":{"Verb":"get"}}])",
        R"([{"KV":{"Verb":"get","Key":"k"},"Node":1}])",
        R"([{"KV":"x"}])",
        R"([{"KV":[]}])",
        R"([{}])",
        R"([{"Node":null}])",
        // shapes
        "[]",
        " [ ] ",
        "{}",
        R"({"KV":{"Verb":"get","Key":"k"}})",
        R"("[]")",
        "1",
        "",
        "   ",
        "[1]",
        R"(["x"])",
        "[[]]",
        deep,
        deep_kv,
        // syntax errors, truncation, invalid UTF-8 (Go turns it into U+FFFD)
        R"([{"KV":{"Verb":"get","Key":"k"}},])",
        R"([{"KV":{"Verb":"get","Key":"k",}}])",
        R"([{"KV":{"Verb":"get","Key":"k"}})",
        R"([{"KV":{"Verb":"get","Key":"k"})",
        R"([{"KV":{"Verb":"get","Key":"k)",
        R"([{"KV":{"Verb":"get","Key":'k'}}])",
        R"([{"KV":{"Verb":"get","Key":"k"}} /* c */ ])",
        "\xef\xbb\xbf" + kv(R"("Verb":"get","Key":"k")"),
        kv("\"Verb\":\"get\",\"Key\":\"\xff\""),
        kv("\"Verb\":\"get\",\"Key\":\"\xc3\""),
        kv("\"Verb\":\"get\",\"Key\":\"\xc0\x80\""),
        kv("\"Verb\":\"get\",\"Key\":\"\xed\xa0\x80\""),
        kv("\"Verb\":\"get\",\"Key\":\"\xf4\x90\x80\x80\""),
        kv("\"Verb\":\"get\",\"Key\":\"a\tb\""),
        kv(std::string("\"Verb\":\"get\",\"Key\":\"a\0b\"", 24)),
    };
    for (const auto& body : declined) {
        INFO("body: " << body);
        CHECK_FALSE(txn_fast_decode(body));
        CHECK_FALSE(txn_compact_decode(body));
    }
}

// Random edits of the bodies above: the fast path may take or leave each, but what it
// takes it must read exactly as the general path does.
TEST_CASE("txn fast decode: random edits of real bodies", "[agent][txn]") {
    std::vector<std::string> seeds = client_bodies();
    seeds.insert(seeds.end(), go_bodies.begin(), go_bodies.end());
    static constexpr char alphabet[] = "{}[]\":, \n0123456789-+.eEnulKVkveryaAbsSFIgx=/\\\x7f\x80"
                                       "\xc3\xa9\xff";
    std::mt19937 rng(20240611);
    std::size_t taken = 0;
    std::size_t compact_taken = 0;
    std::size_t tried = 0;
    for (int round = 0; round < 20000; ++round) {
        std::string body = seeds[rng() % seeds.size()];
        const int edits = 1 + int(rng() % 3);
        for (int e = 0; e < edits && !body.empty(); ++e) {
            const std::size_t at = rng() % body.size();
            const char c = alphabet[rng() % (sizeof alphabet - 1)];
            switch (rng() % 4) {
            case 0:
                body[at] = c;
                break;
            case 1:
                body.insert(body.begin() + std::ptrdiff_t(at), c);
                break;
            case 2:
                body.erase(at, 1 + rng() % 4);
                break;
            default: { // repeat a piece elsewhere (duplicate keys, elements)
                const std::size_t len = 1 + rng() % 24;
                const std::string piece = body.substr(at, len);
                body.insert(rng() % body.size(), piece);
            }
            }
        }
        ++tried;
        if (fast_agrees(body))
            ++taken;
        if (compact_agrees(body))
            ++compact_taken;
    }
    INFO(taken << " of " << tried << " edited bodies taken, " << compact_taken << " compactly");
    CHECK(taken > 0);
    CHECK(taken < tried);
    CHECK(compact_taken > 0);
    CHECK(compact_taken <= taken);
}

// The request bodies of the golden transcripts' transactions (as recorded against Consul).
TEST_CASE("txn fast decode: the golden transcripts' transactions", "[agent][txn]") {
    std::size_t bodies = 0;
    std::size_t taken = 0;
    conclave::test::for_each_golden_step([&](const json::object& step) {
        const auto& d = step.at("do").as_object();
        const auto* path = d.if_contains("path");
        if (!path || !path->as_string().starts_with("/v1/txn"))
            return;
        std::string body;
        if (const auto* j = d.if_contains("json"))
            body = json::serialize(*j);
        else if (const auto* b = d.if_contains("body"))
            body = std::string(b->as_string());
        else
            return;
        ++bodies;
        if (fast_agrees(body))
            ++taken;
        compact_agrees(body);
    });
    INFO(taken << " of " << bodies << " transaction bodies taken");
    CHECK(bodies > 10);
    CHECK(taken > 10);
}

// The lock cycle's bodies, byte for byte as conclave's client sends them (acquire with
// check-not-exists or check-index, a contender's key deleted, release), and Go's api.Txn
// bodies: the compact scanner takes every one, as the general path reads them.
TEST_CASE("txn compact decode: takes the lock cycle's bodies", "[agent][txn]") {
    const std::string s = R"("Session":")" + sess + R"(")";
    const std::vector<std::string> cycle{
        R"([{"KV":{"Verb":"check-not-exists","Key":"cyc/lock"}},{"KV":{"Verb":"lock",)"
        R"("Key":"cyc/lock","Flags":3304740253564472344,)" +
            s + "}}]",
        R"([{"KV":{"Verb":"check-index","Key":"cyc/lock","Index":78172}},{"KV":{"Verb":"lock",)"
        R"("Key":"cyc/lock","Value":"aG9sZGVy","Flags":3304740253564472344,)" +
            s + R"(}},{"KV":{"Verb":"delete","Key":"cyc/lock/)" + sess + R"("}}])",
        R"([{"KV":{"Verb":"unlock","Key":"cyc/lock","Flags":3304740253564472344,)" + s + "}}]",
    };
    for (const auto& body : cycle)
        CHECK(compact_agrees(body));
    for (const auto& body : client_bodies())
        if (body.find('\\') == std::string::npos && body.find('\xc3') == std::string::npos)
            CHECK(compact_agrees(body));
    for (const auto& body : go_bodies)
        CHECK(compact_agrees(body));

    const std::vector<std::string> taken{
        kv(""),
        kv(R"("Verb":"get","Key":"k","Session":null,"Value":null)"),
        kv(R"("Verb":"set","Key":"k","Value":"","Flags":0,"Index":0)"),
        kv(R"("Verb":"cas","Key":"k","Index":18446744073709551615,"Flags":10)"),
        kv("\"Verb\":\"get\",\"Key\":\" !#~\x7f\""),
        kv(R"("Verb":"nope","Key":"k")"),
        kv(R"("Verb":"get","Key":"k")") + "garbage\\",
        R"([{"KV":{"Verb":"get","Key":"k"},"Check":null},{"KV":{},"Service":null}])",
    };
    for (const auto& body : taken)
        CHECK(compact_agrees(body));

    // What the compact scanner leaves to Boost.JSON's parser, which takes it.
    const std::vector<std::string> to_the_parser{
        " " + kv(R"("Verb":"get","Key":"k")"),
        "[ " + kv(R"("Verb":"get","Key":"k")").substr(1),
        kv(R"("Verb": "get","Key":"k")"),
        kv(R"("Verb":"get","Key":"k" )"),
        kv("\"Verb\":\"get\",\"Key\":\"caf\xc3\xa9\""),
        R"([{"Node":null,"KV":{"Verb":"get","Key":"k"}}])",
    };
    for (const auto& body : to_the_parser) {
        INFO("body: " << body);
        CHECK_FALSE(txn_compact_decode(body));
        CHECK(fast_agrees(body));
    }

    // Numbers: digits only, no leading zero, up to 2^64-1.
    const std::vector<std::string> numbers_declined{
        "01", "-1", "-0",  "1.0", "1e2", "1E0", "18446744073709551616", "99999999999999999999",
        "",   "+1", "0x1", "1 ",
    };
    for (const auto& n : numbers_declined) {
        const std::string body = kv(R"("Verb":"get","Key":"k","Flags":)" + n);
        INFO("body: " << body);
        CHECK_FALSE(txn_compact_decode(body));
    }
}

// Flags and Index are read eight digits at a time: every length, every digit in every
// position, and the edges of uint64, against the general path (which takes a number
// exactly when strconv.ParseUint does).
TEST_CASE("txn compact decode: numbers of every length", "[agent][txn]") {
    std::vector<std::string> numbers{"0",
                                     "9",
                                     "10",
                                     "12345678",
                                     "99999999",
                                     "100000000",
                                     "1234567890123456",
                                     "9999999999999999",
                                     "99999999999999999",
                                     "9999999999999999999",
                                     "10000000000000000000",
                                     "18446744073709551615",
                                     "18446744073709551616",
                                     "18446744073709551619",
                                     "18446744073709551620",
                                     "19000000000000000000",
                                     "99999999999999999999",
                                     "100000000000000000000",
                                     "3304740253564472344"};
    std::mt19937_64 rng(7);
    for (std::size_t len = 1; len <= 21; ++len) {
        for (int round = 0; round < 20; ++round) {
            std::string n;
            for (std::size_t i = 0; i < len; ++i)
                n += char('0' + (i == 0 ? 1 + rng() % 9 : rng() % 10));
            numbers.push_back(n);
        }
    }
    for (const auto& n : numbers) {
        for (const std::string_view tail : {"", "x", "}", ":"}) {
            const std::string body =
                kv(R"("Verb":"cas","Key":"k","Index":)" + n) + std::string(tail);
            INFO("body: " << body);
            const general_result g = general(body);
            CHECK(compact_agrees(body) == g.ok);
        }
        // A digit replaced by other bytes, at every position: declined unless still a number.
        for (std::size_t at = 0; at < n.size(); ++at) {
            for (const char c : {'/', ':', '.', 'e', '-', ' ', '\x80', '\xb0', '\0', '0'}) {
                std::string m = n;
                m[at] = c;
                const std::string body = kv(R"("Verb":"cas","Flags":)" + m + R"(,"Key":"k")");
                INFO("body: " << body);
                const general_result g = general(body);
                // Only a space is valid JSON that the compact scanner leaves to the parser.
                CHECK((compact_agrees(body) == g.ok || c == ' '));
            }
        }
    }
}
