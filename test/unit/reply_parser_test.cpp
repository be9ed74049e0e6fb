// The reply parsers (codec/reply_parser: the scanner of reply_scan, then the SAX parser)
// against the DOM code they replaced: every body, valid or not, must get the same verdict
// and, when accepted, the same structs, both from parse_* and from the SAX parser alone.
#include "codec/json.hpp"
#include "codec/reply_parser.hpp"
#include "golden_steps.hpp"

#include <conclave/types.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

using namespace conclave;
using namespace conclave::codec;

namespace {

// --- the DOM path, as endpoints_kv.cpp / endpoints_misc.cpp had it ------------------------

bool dom_entries(const std::string& body, std::vector<kv_entry>& out) {
    error_code ec;
    unsigned char scratch[parse_scratch_size];
    json::monotonic_resource mr(scratch, sizeof scratch);
    auto v = json::parse(body, ec, &mr);
    if (ec || !v.is_array())
        return false;
    out.reserve(v.get_array().size());
    for (const auto& item : v.get_array()) {
        kv_entry e;
        if (!kv_entry_from_json(item, e))
            return false;
        out.push_back(std::move(e));
    }
    return true;
}

bool dom_txn(const std::string& body, txn_result& r) {
    error_code ec;
    unsigned char scratch[parse_scratch_size];
    json::monotonic_resource mr(scratch, sizeof scratch);
    auto v = json::parse(body, ec, &mr);
    if (ec || !v.is_object())
        return false;
    const auto& o = v.get_object();
    if (auto* results = o.if_contains("Results"); results && results->is_array()) {
        for (const auto& item : results->get_array()) {
            const json::value* kv =
                item.is_object() ? item.get_object().if_contains("KV") : nullptr;
            if (!kv)
                continue;
            kv_entry e;
            if (!kv_entry_from_json(*kv, e))
                return false;
            r.results.push_back(std::move(e));
        }
    }
    if (auto* errors = o.if_contains("Errors"); errors && errors->is_array()) {
        for (const auto& item : errors->get_array()) {
            if (!item.is_object())
                return false;
            txn_error err;
            if (auto* idx = item.get_object().if_contains("OpIndex"))
                err.op_index = json_u64(*idx).value_or(0);
            if (auto* what = item.get_object().if_contains("What"); what && what->is_string())
                err.what = std::string(what->get_string());
            r.errors.push_back(std::move(err));
        }
    }
    return true;
}

// --- both ways -----------------------------------------------------------------------------

// Whole body, then fed in pieces of these sizes (strings and keys cross write boundaries).
constexpr std::size_t pieces[] = {0, 1, 2, 3, 7, 64, 1000};

// Parses `body` both ways; checks the same verdict and, when accepted, the same entries.
// Returns the verdict.
bool same_entries(const std::string& body) {
    std::vector<kv_entry> dom;
    const bool dom_ok = dom_entries(body, dom);
    {
        INFO("body: " << body);
        std::vector<kv_entry> parsed;
        const bool parsed_ok = parse_kv_entries(body, parsed);
        CHECK(parsed_ok == dom_ok);
        if (parsed_ok && dom_ok)
            CHECK(parsed == dom);
    }
    for (std::size_t piece : pieces) {
        INFO("body: " << body << "\npiece: " << piece);
        std::vector<kv_entry> sax;
        const bool sax_ok = sax_kv_entries(body, sax, piece);
        CHECK(sax_ok == dom_ok);
        if (sax_ok && dom_ok)
            CHECK(sax == dom);
    }
    return dom_ok;
}

void check_same_txn(const txn_result& a, const txn_result& b) {
    CHECK(a.results == b.results);
    REQUIRE(a.errors.size() == b.errors.size());
    for (std::size_t i = 0; i < b.errors.size(); ++i) {
        CHECK(a.errors[i].op_index == b.errors[i].op_index);
        CHECK(a.errors[i].what == b.errors[i].what);
    }
}

bool same_txn(const std::string& body) {
    txn_result dom;
    const bool dom_ok = dom_txn(body, dom);
    {
        INFO("body: " << body);
        txn_result parsed;
        const bool parsed_ok = parse_txn_reply(body, parsed);
        CHECK(parsed_ok == dom_ok);
        if (parsed_ok && dom_ok)
            check_same_txn(parsed, dom);
    }
    for (std::size_t piece : pieces) {
        INFO("body: " << body << "\npiece: " << piece);
        txn_result sax;
        const bool sax_ok = sax_txn_reply(body, sax, piece);
        CHECK(sax_ok == dom_ok);
        if (sax_ok && dom_ok)
            check_same_txn(sax, dom);
    }
    return dom_ok;
}

// Like Consul's dev mode (Go's json.MarshalIndent, 4 spaces).
void pretty(const json::value& v, std::string& out, int indent = 0) {
    const auto newline = [&](int level) {
        out += '\n';
        out.append(std::size_t(4 * level), ' ');
    };
    if (v.is_object() && !v.get_object().empty()) {
        out += '{';
        bool first = true;
        for (const auto& kv : v.get_object()) {
            if (!first)
                out += ',';
            first = false;
            newline(indent + 1);
            out += json::serialize(json::value(kv.key()));
            out += ": ";
            pretty(kv.value(), out, indent + 1);
        }
        newline(indent);
        out += '}';
    } else if (v.is_array() && !v.get_array().empty()) {
        out += '[';
        bool first = true;
        for (const auto& item : v.get_array()) {
            if (!first)
                out += ',';
            first = false;
            newline(indent + 1);
            pretty(item, out, indent + 1);
        }
        newline(indent);
        out += ']';
    } else {
        out += json::serialize(v);
    }
}

std::string pretty(const json::value& v) {
    std::string out;
    pretty(v, out);
    return out + "\n";
}

// Every value of `v`, depth first, containers before their contents.
void all_values(json::value& v, std::vector<json::value*>& out) {
    out.push_back(&v);
    if (v.is_object())
        for (auto& kv : v.get_object())
            all_values(kv.value(), out);
    else if (v.is_array())
        for (auto& item : v.get_array())
            all_values(item, out);
}

// Each value of `doc` in turn replaced by each of these (wrong types, edge numbers, ...).
const char* const replacements[] = {
    "null",
    "true",
    "false",
    "0",
    "-1",
    "1.5",
    "1e3",
    "-0",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    R"("")",
    R"("YQ==")",
    R"("not base64!")",
    "[]",
    "[1]",
    "{}",
    R"({"KV":{}})",
    R"({"OpIndex":1})",
};

void mutate_each_value(const json::value& doc,
                       const std::function<void(const std::string&)>& check) {
    json::value copy = doc;
    std::vector<json::value*> values;
    all_values(copy, values);
    for (std::size_t i = 0; i < values.size(); ++i) {
        for (const char* r : replacements) {
            json::value mutated = doc;
            std::vector<json::value*> targets;
            all_values(mutated, targets);
            *targets[i] = json::parse(r);
            check(json::serialize(mutated));
        }
    }
}

// Every prefix of `body` (truncated JSON), and `body` with garbage after it.
void cut_and_extend(const std::string& body, const std::function<void(const std::string&)>& check) {
    for (std::size_t n = 0; n < body.size(); ++n)
        check(body.substr(0, n));
    for (const char* tail : {" ", "\n\n", "x", " {}", ",", "]", "}", " null", "/* c */"})
        check(body + tail);
}

using golden_bodies = conclave::test::golden_replies;

golden_bodies load_golden() {
    return conclave::test::load_golden_replies();
}

// A lock cycle's acquire answer, as the dev agent sends it.
const std::string lock_answer = R"({
    "Results": [
        {
            "KV": {
                "LockIndex": 1,
                "Key": "service/leader",
                "Flags": 3304740253564472344,
                "Value": null,
                "Session": "adf4238a-882b-9ddc-4a9d-5b6758e4159e",
                "CreateIndex": 12,
                "ModifyIndex": 13
            }
        }
    ],
    "Errors": null
}
)";

} // namespace

TEST_CASE("reply_parser: golden KV lists and txn answers, compact and pretty", "[codec][sax]") {
    const golden_bodies g = load_golden();
    REQUIRE(g.kv_lists.size() >= 10);
    REQUIRE(g.txns.size() >= 15);
    for (const auto& v : g.kv_lists) {
        CHECK(same_entries(json::serialize(v)));
        CHECK(same_entries(pretty(v)));
    }
    for (const auto& v : g.txns) {
        CHECK(same_txn(json::serialize(v)));
        CHECK(same_txn(pretty(v)));
    }
}

TEST_CASE("reply_parser: a lock answer fills the entry", "[codec][sax]") {
    txn_result r;
    REQUIRE(parse_txn_reply(lock_answer, r));
    REQUIRE(r.results.size() == 1);
    CHECK(r.results[0].key == "service/leader");
    CHECK(r.results[0].flags == 3304740253564472344ULL);
    CHECK(r.results[0].value.empty());
    CHECK(r.results[0].session == "adf4238a-882b-9ddc-4a9d-5b6758e4159e");
    CHECK(r.results[0].lock_index == 1);
    CHECK(r.results[0].create_index == 12);
    CHECK(r.results[0].modify_index == 13);
    CHECK(r.errors.empty());
    CHECK(same_txn(lock_answer));
}

TEST_CASE("reply_parser: KV lists", "[codec][sax]") {
    // Escapes in keys and values (a \u-escaped base64 value, a surrogate pair, quotes).
    CHECK(same_entries(R"([{"LockIndex":0,"Key":"a\u00e9\ud83d\ude00/\"q\"\\\n","Flags":0,)"
                       R"("Value":"\u0059\u0051==","CreateIndex":5,"ModifyIndex":6}])"));
    CHECK(same_entries(R"([{"K\u0065y":"k","V\u0061lue":"YQ==","S\u0065ssion":"s"}])"));
    // Null value, missing session, missing and null numbers, 64-bit flags.
    CHECK(same_entries(R"([{"Key":"k","Value":null,"Flags":18446744073709551615}])"));
    CHECK(same_entries(R"([{"Key":"k","Flags":null,"LockIndex":null,"Session":null}])"));
    CHECK(same_entries(R"([{}])"));
    CHECK(same_entries("[]"));
    CHECK(same_entries(" [ ] \n"));
    CHECK(same_entries(R"([{"Key":"a","Value":""},{"Key":"b","Value":"AP8="},{"Key":"c"}])"));
    // Unknown keys of every type are ignored.
    CHECK(same_entries(R"([{"Key":"k","X":{"a":[1,{"Key":5}],"b":null},"Y":[[]],"Z":"s",)"
                       R"("N":-1.5e300,"T":true}])"));
    // Duplicate keys: the last one counts.
    CHECK(same_entries(R"([{"Key":5,"Key":"k","Flags":-1,"Flags":2,"Value":"!","Value":"YQ=="}])"));
    CHECK(same_entries(
        R"([{"Key":"a","Key":null,"Flags":3,"Flags":null,"Value":"YQ==","Value":null}])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k","Key":{}}])"));
    // Refused: wrong types, negative/fractional/too large numbers, bad base64, not a list.
    CHECK_FALSE(same_entries(R"([{"Key":1}])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k","Value":"YQ="}])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k","Value":"Y Q=="}])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k","Flags":18446744073709551616}])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k","Flags":-1}])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k","ModifyIndex":1.0}])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k","Session":true}])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k","LockIndex":"1"}])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k"},null])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k"},[]])"));
    CHECK_FALSE(same_entries(R"({"Key":"k"})"));
    CHECK_FALSE(same_entries(R"("k")"));
    CHECK_FALSE(same_entries("null"));
    CHECK_FALSE(same_entries(""));
    CHECK_FALSE(same_entries(R"([{"Key":"k"}] x)"));
    CHECK_FALSE(same_entries(R"([{"Key":"k"}][])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k",}])"));
    CHECK_FALSE(same_entries(R"([{"Key":"k"} /* c */])"));
    CHECK_FALSE(same_entries(R"([{"Key":"\ud800"}])"));
    CHECK_FALSE(same_entries("[{\"Key\":\"\xff\"}]"));
}

TEST_CASE("reply_parser: txn answers", "[codec][sax]") {
    CHECK(same_txn(R"({"Results":[],"Errors":null})"));
    CHECK(same_txn(R"({"Results":null,"Errors":null})"));
    CHECK(same_txn(R"({})"));
    CHECK(same_txn(
        R"({"Results":null,"Errors":[{"OpIndex":2,"What":"failed to set key \"a\", index is stale"},)"
        R"({"OpIndex":3,"What":"key \"\u00e9\" doesn't exist"}]})"));
    // Errors elements: OpIndex 0 unless a non-negative integer, What empty unless a string.
    CHECK(same_txn(R"({"Errors":[{},{"OpIndex":-1,"What":1},{"OpIndex":"2","What":null},)"
                   R"({"OpIndex":18446744073709551615,"What":[]},{"OpIndex":1.5,"X":{}}]})"));
    // Non-KV results are skipped, whatever they are; "Results"/"Errors" not arrays: ignored.
    CHECK(same_txn(R"({"Results":[{"Node":{"Node":"n"}},null,1,"s",[{"KV":1}],{"kv":2},)"
                   R"({"KV":{"Key":"k"},"Other":[]}],"Errors":null})"));
    CHECK(same_txn(R"({"Results":{"KV":1},"Errors":{"a":[1]}})"));
    CHECK(same_txn(R"({"Results":"x","Errors":7,"Index":0,"KnownLeader":true})"));
    // Duplicate keys: the last "Results", "Errors", "KV" count.
    CHECK(same_txn(R"({"Results":[{"KV":1}],"Results":[{"KV":{"Key":"b"}}]})"));
    CHECK(same_txn(R"({"Errors":[1],"Errors":[{"OpIndex":1}],"Errors":null})"));
    CHECK(same_txn(R"({"Results":[{"KV":{"Key":1},"KV":{"Key":"k"}}]})"));
    CHECK_FALSE(same_txn(R"({"Results":[{"KV":{"Key":"k"},"KV":null}]})"));
    CHECK_FALSE(same_txn(R"({"Results":[{"KV":{"Key":"k"}}],"Results":[{"KV":[]}]})"));
    // Refused: a bad KV entry, a non-object error, not an object, bad JSON.
    CHECK_FALSE(same_txn(R"({"Results":[{"KV":null}]})"));
    CHECK_FALSE(same_txn(R"({"Results":[{"KV":{"Flags":-1}}]})"));
    CHECK_FALSE(same_txn(R"({"Results":[{"KV":{"Value":"x"}}]})"));
    CHECK_FALSE(same_txn(R"({"Errors":[null]})"));
    CHECK_FALSE(same_txn(R"({"Errors":[[]]})"));
    CHECK_FALSE(same_txn("[]"));
    CHECK_FALSE(same_txn("null"));
    CHECK_FALSE(same_txn(R"({"Results":[]} {})"));
    CHECK_FALSE(same_txn(R"({"Results":[)"));
}

TEST_CASE("reply_parser: every value replaced by other types agrees with the DOM", "[codec][sax]") {
    const golden_bodies g = load_golden();
    const json::value kv_doc =
        json::parse(R"([{"LockIndex":1,"Key":"k","Flags":18446744073709551615,"Value":"YQ==",)"
                    R"("Session":"s","CreateIndex":2,"ModifyIndex":3,"Extra":{"a":[1]}}])");
    const json::value txn_doc = json::parse(
        R"({"Results":[{"KV":{"LockIndex":1,"Key":"k","Flags":5,"Value":null,"Session":"s",)"
        R"("CreateIndex":2,"ModifyIndex":3}},{"Node":{}}],"Errors":[{"OpIndex":1,"What":"w"}]})");
    mutate_each_value(kv_doc, [](const std::string& b) { same_entries(b); });
    mutate_each_value(txn_doc, [](const std::string& b) { same_txn(b); });
    // KV lists given to the txn parser and the other way round.
    for (const auto& v : g.kv_lists)
        CHECK_FALSE(same_txn(json::serialize(v)));
    for (const auto& v : g.txns)
        CHECK_FALSE(same_entries(json::serialize(v)));
}

TEST_CASE("reply_parser: truncated bodies and trailing garbage agree with the DOM",
          "[codec][sax]") {
    cut_and_extend(lock_answer, [](const std::string& b) { same_txn(b); });
    cut_and_extend(R"([{"Key":"a\u00e9","Value":"YQ==","Flags":18446744073709551615},{}])",
                   [](const std::string& b) { same_entries(b); });
}

TEST_CASE("reply_parser: long escaped strings and keys across writes", "[codec][sax]") {
    // Longer than the parser's stack buffer for unescaping (4 KB), so the parser hands
    // escaped strings over in parts even in one write; in pieces, parts cross writes too.
    std::string key = "k/";
    for (int i = 0; i < 3000; ++i)
        key += "\\u00e9\\\"x";
    // A long base64 value ("abc" repeated), one character of each group escaped.
    std::string encoded;
    for (int i = 0; i < 2000; ++i)
        encoded += "\\u0059WJj";
    std::string long_key = std::string(5000, 'K');
    const std::string body = R"([{"Key":")" + key + R"(","Value":")" + encoded +
                             R"(","Session":"s","Flags":7,")" + long_key +
                             R"(":"ignored","Key\u0020":1}])";
    REQUIRE(same_entries(body));
    std::vector<kv_entry> out;
    REQUIRE(sax_kv_entries(body, out, 5));
    REQUIRE(out.size() == 1);
    CHECK(out[0].key.size() == 2 + 3000 * std::string("\xc3\xa9\"x").size());
    CHECK(out[0].value.size() == 3 * 2000);
    CHECK(out[0].value.substr(0, 6) == "abcabc");
    CHECK(out[0].flags == 7);
    // The same in a txn answer, fed a byte at a time and in odd sizes.
    const std::string txn = R"({"Results":[{"KV":)" + body.substr(1, body.size() - 2) +
                            R"(}],"Errors":[{"OpIndex":1,"What":")" + key + R"("}]})";
    REQUIRE(same_txn(txn));
    for (std::size_t piece : {1, 13, 4095, 4097}) {
        txn_result r;
        REQUIRE(sax_txn_reply(txn, r, piece));
        REQUIRE(r.results.size() == 1);
        CHECK(r.results[0].key == out[0].key);
        CHECK(r.results[0].value == out[0].value);
        REQUIRE(r.errors.size() == 1);
        CHECK(r.errors[0].what == out[0].key);
    }
}

TEST_CASE("reply_parser: txn answers append after what the result already holds", "[codec][sax]") {
    txn_result dom;
    txn_result sax;
    dom.results.resize(1);
    dom.results[0].key = "before";
    dom.errors.resize(1);
    sax.results = dom.results;
    sax.errors.resize(1);
    const std::string body = R"({"Results":[{"KV":{"Key":"k"}}],"Results":[{"KV":{"Key":"j"}}],)"
                             R"("Errors":[{"OpIndex":4}]})";
    REQUIRE(dom_txn(body, dom));
    REQUIRE(parse_txn_reply(body, sax));
    CHECK(sax.results == dom.results);
    REQUIRE(sax.results.size() == 2);
    CHECK(sax.results[1].key == "j");
    REQUIRE(sax.errors.size() == 2);
    CHECK(sax.errors[1].op_index == 4);
}
