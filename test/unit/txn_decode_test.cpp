// SPDX-License-Identifier: BSL-1.0
// The dev agent's /v1/txn body decoding (gojson::decode_first + decode_ops, which follow
// Go's json.Decoder into api.TxnOps): the bodies clients send, and every unusual one, with
// the operations or Go's error text each gives.
#include "codec/go/quote.hpp"
#include "codec/json.hpp"
#include "codec/txn_body.hpp"
#include "devagent/src/go/gojson.hpp"
#include "devagent/src/routes/routes.hpp"
#include "golden_steps.hpp"
#include "support/catch.hpp"

#include <conclave/types.hpp>

#include <boost/json.hpp>

#include <charconv>
#include <random>
#include <string>
#include <vector>

using namespace conclave;
using namespace conclave::dev::detail;
namespace json = boost::json;

namespace {

// What decoding `body` gives, in one line: the syntax or decode error, or the operations.
std::string decoded(std::string_view body) {
    auto parsed = gojson::decode_first(body);
    if (!parsed.v)
        return "syntax: " + parsed.error;
    std::vector<decoded_op> ops;
    bool has_nil = false;
    if (std::string err = decode_ops(*parsed.v, ops, has_nil); !err.empty())
        return "error: " + err;
    std::string s;
    for (const auto& d : ops) {
        if (!s.empty())
            s += "; ";
        if (!d.present) {
            s += "absent";
            continue;
        }
        if (!d.op.is_kv) {
            s += d.op.family + " " + codec::go::quote(d.verb_of_other);
            continue;
        }
        const kv_entry& e = d.op.entry;
        s += codec::go::quote(d.op.verb) + " " + codec::go::quote(e.key);
        if (!e.value.empty())
            s += " value=" + codec::go::quote(e.value);
        if (e.flags != 0)
            s += " flags=" + std::to_string(e.flags);
        if (e.modify_index != 0)
            s += " index=" + std::to_string(e.modify_index);
        if (!e.session.empty())
            s += " session=" + codec::go::quote(e.session);
    }
    if (has_nil)
        s += " (nil)";
    return s.empty() ? "none" : s;
}

// What decoded() says of the operations a client sent.
std::string expected(const std::vector<txn_op>& ops) {
    std::string s;
    for (const auto& op : ops) {
        if (!s.empty())
            s += "; ";
        s += codec::go::quote(codec::kv_verb_name(op.verb)) + " " + codec::go::quote(op.key);
        if (!op.value.empty())
            s += " value=" + codec::go::quote(op.value);
        if (op.flags != 0)
            s += " flags=" + std::to_string(op.flags);
        if (op.index != 0)
            s += " index=" + std::to_string(op.index);
        if (!op.session.empty())
            s += " session=" + codec::go::quote(op.session);
    }
    return s;
}

const std::string sess = "adf4238a-882b-9ddc-4a9d-5b6758e4159e";

std::string kv(std::string_view fields) {
    return R"([{"KV":{)" + std::string(fields) + "}}]";
}

} // namespace

TEST_CASE("txn decode: what conclave's client sends", "[agent][txn]") {
    const std::vector<std::vector<txn_op>> cases{
        {txn_op::get("k")},
        {txn_op::set("k", "v", 7), txn_op::cas("k", "hello", 12, 3)},
        {txn_op::check_not_exists("service/x/lock"),
         txn_op::lock("service/x/lock", sess, "holder", lock_flag_value),
         txn_op::get("service/x/lock")},
        {txn_op::check_index("cyc/lock", 78172),
         txn_op::lock("cyc/lock", sess, "holder", lock_flag_value),
         txn_op::remove("cyc/lock/" + sess)},
        {txn_op::unlock("service/x/lock", sess, ""),
         txn_op::check_index("k", 18446744073709551615ULL)},
        {txn_op::check_session("k", sess), txn_op::remove("k"), txn_op::remove_tree("p/"),
         txn_op::remove_cas("k", 9)},
        {txn_op::lock("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 <&>", sess,
                      std::string(3000, 'x'))},
        {txn_op::set("k", std::string("\0\x01\xff\"\\", 5), 0)},
        {txn_op::set("a\"b\\c\n\x01\x7f", "v")},
        {txn_op::get("")},
    };
    for (const auto& ops : cases) {
        const std::string body = codec::txn_body(ops);
        INFO("body: " << body);
        CHECK(decoded(body) == expected(ops));
    }
}

TEST_CASE("txn decode: what Go's api.Txn sends", "[agent][txn]") {
    // Every family, nil ones as null, a nil Value as null, zero Flags and Index, with
    // json.Encoder's newline at the end.
    CHECK(decoded(R"([{"KV":{"Verb":"lock","Key":"a","Value":"dGVzdA==","Flags":0,"Index":0,)"
                  R"("Session":")" +
                  sess +
                  R"("},"Node":null,"Service":null,"Check":null},)"
                  R"({"KV":{"Verb":"get","Key":"a","Value":null,"Flags":0,"Index":0,)"
                  R"("Session":""},"Node":null,"Service":null,"Check":null}])"
                  "\n") == "\"lock\" \"a\" value=\"test\" session=\"" + sess + "\"; \"get\" \"a\"");
    CHECK(decoded(R"([{"KV":{"Verb":"delete-cas","Key":"a","Value":null,"Flags":0,"Index":42,)"
                  R"("Session":""},"Node":null,"Service":null,"Check":null}])") ==
          "\"delete-cas\" \"a\" index=42");
}

TEST_CASE("txn decode: unusual bodies, as Go reads them", "[agent][txn]") {
    const std::string deep = std::string(40, '[') + std::string(40, ']');
    const std::string deep_kv = R"([{"KV":{"Verb":"get","Key":"k","Value":)" +
                                std::string(40, '[') + std::string(40, ']') + "}}]";
    const std::vector<std::pair<std::string, std::string>> cases{
        {kv(R"("Verb":"set","Key":"k","Value":"","Flags":0,"Index":0,"Session":"")"),
         "\"set\" \"k\""},
        {kv(R"("Session":"s","Index":5,"Flags":18446744073709551615,"Value":"AA==",)"
            R"("Key":"k","Verb":"cas")"),
         "\"cas\" \"k\" value=\"\\x00\" flags=18446744073709551615 index=5 session=\"s\""},
        {kv(""), "\"\" \"\""},
        {kv(R"("Verb":"get","Key":"k","Session":null)"), "\"get\" \"k\""},
        {kv(R"("Verb":"nope","Key":"k")"), "\"nope\" \"k\""},
        {" \t\r\n" + kv(R"("Verb":"get","Key":"k")") + " \n", "\"get\" \"k\""},
        {kv(R"("Verb":"get","Key":"k")") + "garbage", "\"get\" \"k\""},
        {kv(R"("Verb":"get","Key":"k")") + "[", "\"get\" \"k\""},
        {kv(R"("Verb":"get","Key":"k")") + "\xff", "\"get\" \"k\""},
        {kv(R"("Verb":"get","Key":"k")") + "\\", "\"get\" \"k\""},
        {R"([{"Check":null,"KV":{"Verb":"get","Key":"k"},"Node":null}])", "\"get\" \"k\""},
        {"[ { \"KV\" : { \"Verb\" : \"get\" , \"Key\" : \"k\" } } , {\"KV\":{\"Key\":\"\x7f\"}} ]",
         "\"get\" \"k\"; \"\" \"\\x7f\""},
        {kv("\"Key\":\"\x7f\xc2\x80\xef\xbf\xbf\xf4\x8f\xbf\xbf\""),
         "\"\" \"\\x7f\\u0080\xEF\xBF\xBF\\U0010ffff\""},
        {kv(R"("Verb":"get","Key":"\u00e9")"), "\"get\" \"\xC3\xA9\""},
        {kv(R"("Verb":"get","Key":"\ud800")"), "\"get\" \"\xEF\xBF\xBD\""},
        {kv(R"("Verb":"get","Key":"\ud83d\ude00\udc00x\ud800\ud800\udc00")"),
         "\"get\" \"\xF0\x9F\x98\x80\xEF\xBF\xBDx\xEF\xBF\xBD\xF0\x90\x80\x80\""},
        {kv(R"("Verb":"get","Key":"a\/b")"), "\"get\" \"a/b\""},
        {kv(R"("Verb":"get","K\u0065y":"k")"), "\"get\" \"k\""},
        {R"([{"kv":{"Verb":"get","Key":"k"}}])", "\"get\" \"k\""},
        {R"([{"Kv":{"Verb":"get","Key":"k"}}])", "\"get\" \"k\""},
        {kv(R"("verb":"get","Key":"k")"), "\"get\" \"k\""},
        {kv(R"("Verb":"get","KEY":"k")"), "\"get\" \"k\""},
        {kv(R"("Verb":"get","Key":"k","session":"s")"), "\"get\" \"k\" session=\"s\""},
        {kv(R"("Verb":"get","Key":"k","Key":"j")"), "\"get\" \"j\""},
        {kv(R"("Verb":"get","Verb":"set","Key":"k")"), "\"set\" \"k\""},
        {R"([{"KV":{"Verb":"get","Key":"k"},"KV":{"Verb":"set","Key":"k"}}])", "\"set\" \"k\""},
        {R"([{"KV":{"Verb":"get","Key":"k"},"Node":null,"Node":null}])", "\"get\" \"k\""},
        {"null", "none"},
        {"[null]", "absent (nil)"},
        {R"([{"KV":{"Verb":"get","Key":"k"}},null])", "\"get\" \"k\"; absent (nil)"},
        {R"([{"KV":null}])", "absent"},
        {R"([{"KV":{"Verb":"get","Key":"k"},"KV":null}])", "absent"},
        {kv(R"("Verb":"get","Key":"k","Flags":-1)"),
         "error: json: cannot unmarshal number -1 into Go struct field KVTxnOp.KV.Flags of type "
         "uint64"},
        {kv(R"("Verb":"get","Key":"k","Flags":-0)"),
         "error: json: cannot unmarshal number -0 into Go struct field KVTxnOp.KV.Flags of type "
         "uint64"},
        {kv(R"("Verb":"get","Key":"k","Index":1.0)"),
         "error: json: cannot unmarshal number 1.0 into Go struct field KVTxnOp.KV.Index of type "
         "uint64"},
        {kv(R"("Verb":"get","Key":"k","Index":1e2)"),
         "error: json: cannot unmarshal number 1e2 into Go struct field KVTxnOp.KV.Index of type "
         "uint64"},
        {kv(R"("Verb":"get","Key":"k","Index":1E0)"),
         "error: json: cannot unmarshal number 1E0 into Go struct field KVTxnOp.KV.Index of type "
         "uint64"},
        {kv(R"("Verb":"get","Key":"k","Index":18446744073709551616)"),
         "error: json: cannot unmarshal number 18446744073709551616 into Go struct field "
         "KVTxnOp.KV.Index of type uint64"},
        {kv(R"("Verb":"get","Key":"k","Index":1e99999999999999999999)"),
         "error: json: cannot unmarshal number 1e99999999999999999999 into Go struct field "
         "KVTxnOp.KV.Index of type uint64"},
        {kv(R"("Verb":"get","Key":"k","Flags":"1")"),
         "error: json: cannot unmarshal string into Go struct field KVTxnOp.KV.Flags of type "
         "uint64"},
        {kv(R"("Verb":"get","Key":"k","Flags":true)"),
         "error: json: cannot unmarshal bool into Go struct field KVTxnOp.KV.Flags of type uint64"},
        {kv(R"("Verb":1,"Key":"k")"), "error: json: cannot unmarshal number into Go struct field "
                                      "KVTxnOp.KV.Verb of type api.KVOp"},
        {kv(R"("Verb":"get","Key":["k"])"),
         "error: json: cannot unmarshal array into Go struct field KVTxnOp.KV.Key of type string"},
        {kv(R"("Verb":"get","Key":{"k":1})"),
         "error: json: cannot unmarshal object into Go struct field KVTxnOp.KV.Key of type string"},
        {kv(R"("Verb":"get","Key":false)"),
         "error: json: cannot unmarshal bool into Go struct field KVTxnOp.KV.Key of type string"},
        {kv(R"("Verb":"set","Key":"k","Value":[1,2,3])"),
         "\"set\" \"k\" value=\"\\x01\\x02\\x03\""},
        {kv(R"("Verb":"set","Key":"k","Value":[])"), "\"set\" \"k\""},
        {kv(R"("Verb":"set","Key":"k","Value":[255,256,-1,1.5,null,"x",0])"),
         "error: json: cannot unmarshal number 256 into Go struct field KVTxnOp.KV.Value of type "
         "uint8"},
        {kv(R"("Verb":"set","Key":"k","Value":"dGVzdA")"),
         "error: illegal base64 data at input byte 4"},
        {kv(R"("Verb":"set","Key":"k","Value":"dGVzdA=")"),
         "error: illegal base64 data at input byte 7"},
        {kv(R"("Verb":"set","Key":"k","Value":"!!!!")"),
         "error: illegal base64 data at input byte 0"},
        {kv(R"("Verb":"set","Key":"k","Value":"dGVz dA==")"),
         "error: illegal base64 data at input byte 4"},
        {kv(R"("Verb":"set","Key":"k","Value":{})"),
         "error: json: cannot unmarshal object into Go struct field KVTxnOp.KV.Value of type "
         "[]uint8"},
        {kv(R"("Verb":"get","Key":"k","Namespace":"default")"), "\"get\" \"k\""},
        {kv(R"("Verb":"get","Key":"k","Namespace":7)"),
         "error: json: cannot unmarshal number into Go struct field KVTxnOp.KV.Namespace of type "
         "string"},
        // Consul's decoder refuses unknown fields, also null ones; 1.8's api.KVTxnOp has no
        // Partition. The first error in the document is the one reported.
        {kv(R"("Verb":"get","Key":"k","Extra":1)"), "error: json: unknown field \"Extra\""},
        {R"([{"KV":{"Verb":"get","Key":"k"},"Other":1}])", "error: json: unknown field \"Other\""},
        {kv(R"("Verb":"get","Key":"k","Partition":"")"),
         "error: json: unknown field \"Partition\""},
        {kv(R"("Verb":"get","Key":"k","partition":null)"),
         "error: json: unknown field \"partition\""},
        {kv(R"("Verb":"get","Key":"k","namespace":"foo")"), "\"get\" \"k\""},
        {kv(R"("Verb":1,"Key":"k","Partition":"foo")"),
         "error: json: cannot unmarshal number into Go struct field KVTxnOp.KV.Verb of type "
         "api.KVOp"},
        {kv(R"("Partition":"foo","Verb":1,"Key":"k")"), "error: json: unknown field \"Partition\""},
        {R"([{"Session":{"Verb":"delete"}}])", "error: json: unknown field \"Session\""},
        {R"([{"Node":{"Verb":"get","Node":{"Node":"n"}}}])", "Node \"get\""},
        {R"([{"Node":{"Verb":"set","Node":{"Node":"n"}}}])", "Node \"set\""},
        {R"([{"Service":{"Verb":"get","Node":"n","Service":{"ID":"s"}}}])", "Service \"get\""},
        {R"([{"Check":{"Verb":"get","Check":{"Node":"n","CheckID":"c"}}}])", "Check \"get\""},
        {R"([{"KV":{"Verb":"get","Key":"k"},"Check":{"Verb":"get"}}])", "\"get\" \"k\""},
        {R"([{"KV":{"Verb":"get","Key":"k"},"Node":1}])",
         "error: json: cannot unmarshal number into Go struct field TxnOp.Node of type "
         "api.NodeTxnOp"},
        {R"([{"KV":"x"}])",
         "error: json: cannot unmarshal string into Go struct field TxnOp.KV of type api.KVTxnOp"},
        {R"([{"KV":[]}])",
         "error: json: cannot unmarshal array into Go struct field TxnOp.KV of type api.KVTxnOp"},
        {R"([{}])", "absent"},
        {R"([{"Node":null}])", "absent"},
        {"[]", "none"},
        {" [ ] ", "none"},
        {"{}", "error: json: cannot unmarshal object into Go value of type api.TxnOps"},
        {R"({"KV":{"Verb":"get","Key":"k"}})",
         "error: json: cannot unmarshal object into Go value of type api.TxnOps"},
        {R"("[]")", "error: json: cannot unmarshal string into Go value of type api.TxnOps"},
        {"1", "error: json: cannot unmarshal number into Go value of type api.TxnOps"},
        {"", "syntax: EOF"},
        {"   ", "syntax: EOF"},
        {"[1]", "error: json: cannot unmarshal number into Go value of type api.TxnOp"},
        {R"(["x"])", "error: json: cannot unmarshal string into Go value of type api.TxnOp"},
        {"[[]]", "error: json: cannot unmarshal array into Go value of type api.TxnOp"},
        {deep, "error: json: cannot unmarshal array into Go value of type api.TxnOp"},
        {deep_kv,
         "error: json: cannot unmarshal array into Go struct field KVTxnOp.KV.Value of type uint8"},
        {R"([{"KV":{"Verb":"get","Key":"k"}},])",
         "syntax: invalid character ']' looking for beginning of value"},
        {R"([{"KV":{"Verb":"get","Key":"k",}}])",
         "syntax: invalid character '}' looking for beginning of object key string"},
        {R"([{"KV":{"Verb":"get","Key":"k"}})", "syntax: unexpected EOF"},
        {R"([{"KV":{"Verb":"get","Key":"k"})", "syntax: unexpected EOF"},
        {R"([{"KV":{"Verb":"get","Key":"k)", "syntax: unexpected EOF"},
        {R"([{"KV":{"Verb":"get","Key":'k'}}])",
         "syntax: invalid character '\\'' looking for beginning of value"},
        {R"([{"KV":{"Verb":"get","Key":"k"}} /* c */ ])",
         "syntax: invalid character '/' after array element"},
        {R"([{"KV":{"Verb":"get","Key":tru}}])",
         "syntax: invalid character '}' in literal true (expecting 'e')"},
        {R"([{"KV":{"Verb":"get","Key":"\u12x4"}}])",
         "syntax: invalid character 'x' in \\u hexadecimal character escape"},
        {R"([{"KV":{"Verb":"get","Key":"\q"}}])",
         "syntax: invalid character 'q' in string escape code"},
        {R"([{"KV":{"Verb":"get" "Key":"k"}}])",
         "syntax: invalid character '\"' after object key:value pair"},
        {R"([{"KV" {"Verb":"get"}}])", "syntax: invalid character '{' after object key"},
        {R"([{"KV":{"Verb":"get","Flags":1.x}}])",
         "syntax: invalid character 'x' after decimal point in numeric literal"},
        {R"([{"KV":{"Verb":"get","Flags":-}}])",
         "syntax: invalid character '}' in numeric literal"},
        {R"([{"KV":{"Verb":"get","Flags":1e+}}])",
         "syntax: invalid character '}' in exponent of numeric literal"},
        {"\xef\xbb\xbf" + kv(R"("Verb":"get","Key":"k")"),
         "syntax: invalid character '\xC3\xAF' looking for beginning of value"},
        {kv("\"Verb\":\"get\",\"Key\":\"\xff\""), "\"get\" \"\xEF\xBF\xBD\""},
        {kv("\"Verb\":\"get\",\"Key\":\"\xc3\""), "\"get\" \"\xEF\xBF\xBD\""},
        {kv("\"Verb\":\"get\",\"Key\":\"\xc0\x80\""), "\"get\" \"\xEF\xBF\xBD\xEF\xBF\xBD\""},
        {kv("\"Verb\":\"get\",\"Key\":\"\xed\xa0\x80\""),
         "\"get\" \"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""},
        {kv("\"Verb\":\"get\",\"Key\":\"\xf4\x90\x80\x80\""),
         "\"get\" \"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""},
        {kv("\"Verb\":\"get\",\"Key\":\"a\tb\""),
         "syntax: invalid character '\\t' in string literal"},
        {kv(std::string("\"Verb\":\"get\",\"Key\":\"a\0b\"", 24)),
         "syntax: invalid character '\\x00' in string literal"},
    };
    for (const auto& [body, want] : cases) {
        INFO("body: " << body);
        CHECK(decoded(body) == want);
    }
}

// Flags and Index: a number exactly when strconv.ParseUint takes its literal.
TEST_CASE("txn decode: numbers of every length", "[agent][txn]") {
    std::vector<std::string> numbers{"0",
                                     "9",
                                     "10",
                                     "99999999",
                                     "100000000",
                                     "9999999999999999999",
                                     "10000000000000000000",
                                     "18446744073709551615",
                                     "18446744073709551616",
                                     "18446744073709551620",
                                     "19000000000000000000",
                                     "99999999999999999999",
                                     "100000000000000000000",
                                     "3304740253564472344"};
    std::mt19937_64 rng(7);
    for (std::size_t len = 1; len <= 21; ++len) {
        for (int round = 0; round < 10; ++round) {
            std::string n;
            for (std::size_t i = 0; i < len; ++i)
                n += char('0' + (i == 0 ? 1 + rng() % 9 : rng() % 10));
            numbers.push_back(n);
        }
    }
    for (const auto& n : numbers) {
        std::uint64_t v = 0;
        const bool fits = std::from_chars(n.data(), n.data() + n.size(), v).ec == std::errc{};
        const std::string body = kv(R"("Verb":"cas","Key":"k","Index":)" + n);
        INFO("body: " << body);
        CHECK(decoded(body) == (fits
                                    ? "\"cas\" \"k\"" + (v != 0 ? " index=" + n : std::string())
                                    : "error: json: cannot unmarshal number " + n +
                                          " into Go struct field KVTxnOp.KV.Index of type uint64"));
        for (const std::string_view tail : {"x", "}", ":"})
            CHECK(decoded(body + std::string(tail)) == decoded(body));
    }
}

// The request bodies of the golden transcripts' transactions (as recorded against Consul).
TEST_CASE("txn decode: the golden transcripts' transactions", "[agent][txn]") {
    std::size_t bodies = 0;
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
        INFO("body: " << body);
        CHECK(decoded(body).find("syntax: ") == std::string::npos);
    });
    CHECK(bodies > 10);
}
