// SPDX-License-Identifier: BSL-1.0
// The client's reply decoders (codec::parse_kv_entries, codec::parse_txn_reply): the answers
// Consul sends, indented (dev mode) or compact, and every odd or broken body, with the
// verdict and the structs each one must give.
#include "codec/go/json_marshal.hpp"
#include "codec/json.hpp"
#include "devagent/src/go/gojson.hpp"
#include "golden_steps.hpp"
#include "support/catch.hpp"

#include <conclave/types.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace conclave;
using namespace conclave::codec;
namespace gojson = conclave::dev::detail::gojson;

namespace {

std::optional<std::vector<kv_entry>> entries_of(const std::string& body) {
    std::vector<kv_entry> out;
    if (!parse_kv_entries(body, out))
        return std::nullopt;
    return out;
}

std::optional<txn_result> txn_of(const std::string& body) {
    txn_result out;
    if (!parse_txn_reply(body, out))
        return std::nullopt;
    return out;
}

bool kv_ok(const std::string& body) {
    INFO("body: " << body);
    return entries_of(body).has_value();
}

bool txn_ok(const std::string& body) {
    INFO("body: " << body);
    return txn_of(body).has_value();
}

// The one entry of a KV list that must be accepted.
kv_entry only_entry(const std::string& body) {
    INFO("body: " << body);
    const auto out = entries_of(body);
    REQUIRE(out);
    REQUIRE(out->size() == 1);
    return out->front();
}

kv_entry entry(std::string key, std::string value = {}, std::uint64_t flags = 0,
               std::string session = {}, std::uint64_t lock_index = 0,
               std::uint64_t create_index = 0, std::uint64_t modify_index = 0) {
    kv_entry e;
    e.key = std::move(key);
    e.value = std::move(value);
    e.flags = flags;
    e.session = std::move(session);
    e.lock_index = lock_index;
    e.create_index = create_index;
    e.modify_index = modify_index;
    return e;
}

void check_errors(const std::vector<txn_error>& got, const std::vector<txn_error>& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        CHECK(got[i].op_index == want[i].op_index);
        CHECK(got[i].what == want[i].what);
    }
}

// --- realistic answers -----------------------------------------------------------------------

std::vector<kv_entry> make_entries(std::size_t n) {
    std::vector<kv_entry> out;
    for (std::size_t i = 0; i < n; ++i) {
        std::string value;
        for (std::size_t j = 0; j < i % 7; ++j) // 0..6 bytes: every padding, every byte value
            value += char((i * 37 + j * 101) % 256);
        const bool locked = i % 2 == 0;
        out.push_back(
            entry("service/app-" + std::to_string(i) + "/leader", value,
                  i % 3 == 0   ? lock_flag_value
                  : i % 3 == 1 ? 0
                               : ~std::uint64_t(0),
                  locked ? "adf4238a-882b-9ddc-4a9d-5b6758e4159" + std::to_string(i % 10) : "",
                  locked ? i + 1 : 0, 12 + i, 1000000 + 7 * i));
    }
    return out;
}

json::value kv_list_json(const std::vector<kv_entry>& entries) {
    json::array a;
    for (const auto& e : entries)
        a.push_back(kv_entry_to_json(e));
    return a;
}

// Consul's TxnResponse (TxnReadResponse when read_only): Results null on a rollback.
json::value txn_json(const std::vector<kv_entry>& results, const std::vector<txn_error>& errors,
                     bool read_only) {
    json::object o;
    if (errors.empty()) {
        json::array a;
        for (const auto& e : results)
            a.push_back(json::object{{"KV", kv_entry_to_json(e)}});
        o["Results"] = std::move(a);
        o["Errors"] = nullptr;
    } else {
        o["Results"] = nullptr;
        json::array a;
        for (const auto& e : errors)
            a.push_back(json::object{{"OpIndex", e.op_index}, {"What", e.what}});
        o["Errors"] = std::move(a);
    }
    if (read_only) {
        o["Index"] = 0;
        o["LastContact"] = 0;
        o["KnownLeader"] = true;
        o["ConsistencyLevel"] = "";
        o["NotModified"] = false;
    }
    return o;
}

// A body in both of Consul's formats.
std::vector<std::string> both_formats(const json::value& v) {
    return {gojson::answer_body(v), conclave::codec::go::marshal(v)};
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

// --- every value of a document replaced --------------------------------------------------------

// Every value of `v`, depth first, containers before their contents, with its path
// (object keys and "[]" for array elements, joined by '/').
void all_values(json::value& v, const std::string& path,
                std::vector<std::pair<json::value*, std::string>>& out) {
    out.emplace_back(&v, path);
    if (v.is_object())
        for (auto& kv : v.get_object())
            all_values(kv.value(), path + "/" + std::string(kv.key()), out);
    else if (v.is_array())
        for (auto& item : v.get_array())
            all_values(item, path + "/[]", out);
}

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

// What a KVPair field takes: strings (Value: padded base64) or null; numbers from 0 to
// 2^64-1 (-0 is 0) or null.
bool field_takes(const std::string& field, const json::value& r) {
    if (r.is_null())
        return true;
    if (field == "Key" || field == "Session")
        return r.is_string();
    if (field == "Value")
        return r.is_string() && (r.get_string().empty() || r.get_string() == "YQ==");
    return r.is_uint64() || (r.is_int64() && r.get_int64() >= 0);
}

// Whether a KVPair object is valid: only objects are, and these replacements are.
bool kv_object(const json::value& r) {
    return r.is_object();
}

void replace_each_value(const json::value& doc,
                        const std::function<void(const std::string& path, const json::value& r,
                                                 const std::string& body)>& check) {
    json::value copy = doc;
    std::vector<std::pair<json::value*, std::string>> values;
    all_values(copy, "", values);
    for (std::size_t i = 0; i < values.size(); ++i) {
        for (const char* text : replacements) {
            json::value mutated = doc;
            std::vector<std::pair<json::value*, std::string>> targets;
            all_values(mutated, "", targets);
            const json::value r = json::parse(text);
            *targets[i].first = r;
            check(values[i].second, r, json::serialize(mutated));
        }
    }
}

// --- random damage ---------------------------------------------------------------------------

// One to three random edits: replaced, inserted or deleted bytes, a cut, a copied slice.
std::string damage(std::string s, std::mt19937& rng) {
    static const std::string alphabet("{}[]:,\"\\ \n\t\r0123456789-+.eEnultrfasKVY=/x\0\x1f\x7f"
                                      "\x80\xc3\xa9\xff",
                                      48);
    const auto pick = [&](std::size_t n) { return n == 0 ? 0 : std::size_t(rng() % n); };
    const std::size_t edits = 1 + pick(3);
    for (std::size_t i = 0; i < edits; ++i) {
        const std::size_t at = pick(s.size() + 1);
        switch (pick(6)) {
        case 0:
            if (at < s.size())
                s[at] = alphabet[pick(alphabet.size())];
            break;
        case 1:
            s.insert(s.begin() + std::ptrdiff_t(at), alphabet[pick(alphabet.size())]);
            break;
        case 2:
            if (at < s.size())
                s.erase(at, 1);
            break;
        case 3:
            s.resize(at);
            break;
        case 4: { // a copied slice repeats keys, members, elements
            const std::string slice = s.substr(pick(s.size() + 1), 1 + pick(40));
            s.insert(at, slice);
            break;
        }
        default:
            if (at < s.size())
                s[at] = char(rng() % 256);
            break;
        }
    }
    return s;
}

} // namespace

TEST_CASE("replies: the answers Consul sends, indented and compact", "[codec][reply]") {
    for (std::size_t n : {0, 1, 2, 3, 40}) {
        const auto entries = make_entries(n);
        for (const auto& body : both_formats(kv_list_json(entries))) {
            INFO(body);
            const auto out = entries_of(body);
            REQUIRE(out);
            CHECK(*out == entries);
        }
    }
    std::vector<txn_error> errors(1);
    errors[0].what = R"(failed to lock key "service/leader", lock is already held)";
    txn_error stale;
    stale.op_index = 2;
    stale.what = "failed to set key \"a/b\", index is stale\tand\\or /gone/ <&>";
    for (bool read_only : {false, true}) {
        for (std::size_t n : {0, 1, 2, 40}) {
            const auto entries = make_entries(n);
            for (const auto& body : both_formats(txn_json(entries, {}, read_only))) {
                INFO(body);
                const auto out = txn_of(body);
                REQUIRE(out);
                CHECK(out->results == entries);
                CHECK(out->errors.empty());
            }
        }
        for (const auto& set : {errors, std::vector<txn_error>{errors[0], stale}})
            for (const auto& body : both_formats(txn_json({}, set, read_only))) {
                INFO(body);
                const auto out = txn_of(body);
                REQUIRE(out);
                CHECK(out->results.empty());
                check_errors(out->errors, set);
            }
    }
}

TEST_CASE("replies: a lock answer fills the entry", "[codec][reply]") {
    const auto r = txn_of(lock_answer);
    REQUIRE(r);
    REQUIRE(r->results.size() == 1);
    CHECK(r->results[0] == entry("service/leader", "", lock_flag_value,
                                 "adf4238a-882b-9ddc-4a9d-5b6758e4159e", 1, 12, 13));
    CHECK(r->errors.empty());
}

TEST_CASE("replies: golden KV lists and txn answers, compact and pretty", "[codec][reply]") {
    const auto g = conclave::test::load_golden_replies();
    REQUIRE(g.kv_lists.size() >= 10);
    REQUIRE(g.txns.size() >= 15);
    for (const auto& v : g.kv_lists)
        for (const auto& body : both_formats(v)) {
            const auto out = entries_of(body);
            REQUIRE(out);
            CHECK(out->size() == v.as_array().size());
            CHECK_FALSE(txn_ok(body));
        }
    for (const auto& v : g.txns)
        for (const auto& body : both_formats(v)) {
            CHECK(txn_ok(body));
            CHECK_FALSE(kv_ok(body));
        }
}

TEST_CASE("replies: KV lists, odd but valid", "[codec][reply]") {
    // Escapes in keys and values (a \u-escaped base64 value, a surrogate pair, quotes).
    CHECK(only_entry(R"([{"LockIndex":0,"Key":"a\u00e9\ud83d\ude00/\"q\"\\\n","Flags":0,)"
                     R"("Value":"\u0059\u0051==","CreateIndex":5,"ModifyIndex":6}])") ==
          entry("a\xC3\xA9\xF0\x9F\x98\x80/\"q\"\\\n", "a", 0, "", 0, 5, 6));
    CHECK(only_entry(R"([{"K\u0065y":"k","V\u0061lue":"YQ==","S\u0065ssion":"s"}])") ==
          entry("k", "a", 0, "s"));
    CHECK(only_entry(R"([{"Key":"a\/b\"c\\d\n\t\r\b\f","Session":"","Value":""}])") ==
          entry("a/b\"c\\d\n\t\r\b\f"));
    CHECK(only_entry("[{\"Key\":\"\x7f ~\"}]") == entry("\x7f ~"));
    // Unicode keys, as they are and escaped.
    CHECK(only_entry("[{\"Key\":\"\xD0\xBA\xD0\xBB\xD1\x8E\xD1\x87/\xC3\xA9\xE2\x80\xA8\"}]") ==
          entry("\xD0\xBA\xD0\xBB\xD1\x8E\xD1\x87/\xC3\xA9\xE2\x80\xA8"));
    CHECK(only_entry(R"([{"Key":"\u043a\u2028\u0000"}])") ==
          entry(std::string("\xD0\xBA\xE2\x80\xA8\0", 6)));
    // Null value, missing session, missing and null numbers, 64-bit flags and indexes.
    CHECK(only_entry(R"([{"Key":"k","Value":null,"Flags":18446744073709551615}])") ==
          entry("k", "", ~std::uint64_t(0)));
    CHECK(only_entry(R"([{"Key":"k","Flags":null,"LockIndex":null,"Session":null}])") ==
          entry("k"));
    CHECK(only_entry(R"([{"Key":null,"Session":null,"Value":null,"Flags":null,)"
                     R"("LockIndex":null,"CreateIndex":null,"ModifyIndex":null}])") == entry(""));
    CHECK(only_entry(R"([{"ModifyIndex":0,"CreateIndex":18446744073709551615,"Value":"AP8="}])") ==
          entry("", std::string("\0\xff", 2), 0, "", 0, ~std::uint64_t(0), 0));
    CHECK(only_entry(R"([{"LockIndex":9223372036854775808,"ModifyIndex":9223372036854775807}])") ==
          entry("", "", 0, "", 9223372036854775808ULL, 0, 9223372036854775807ULL));
    CHECK(only_entry(R"([{"Flags":-0,"Value":"\/w=="}])") == entry("", "\xff"));
    CHECK(only_entry("[{}]") == entry(""));
    CHECK(entries_of("[]")->empty());
    CHECK(entries_of(" \t\r\n[ ]\n\n")->empty());
    CHECK(entries_of("[\n{ } ,{}\r\n]")->size() == 2);
    const auto three =
        entries_of(R"([{"Key":"a","Value":""},{"Key":"b","Value":"AP8="},{"Key":"c"}])");
    REQUIRE(three);
    CHECK(*three ==
          std::vector<kv_entry>{entry("a"), entry("b", std::string("\0\xff", 2)), entry("c")});
    // Unknown keys of every type are ignored.
    CHECK(only_entry(R"([{"Key":"k","X":{"a":[1,{"Key":5}],"b":null},"Y":[[]],"Z":"s",)"
                     R"("N":-1.5e300,"T":true}])") == entry("k"));
    // Duplicate keys: the last one counts.
    CHECK(only_entry(R"([{"Key":5,"Key":"k","Flags":-1,"Flags":2,"Value":"!","Value":"YQ=="}])") ==
          entry("k", "a", 2));
    CHECK(only_entry(R"([{"Key":"a","Key":null,"Flags":3,"Flags":null,"Value":"YQ==",)"
                     R"("Value":null}])") == entry(""));
    // Whitespace of every kind between members.
    CHECK(only_entry("[{\n  \"Key\": \"k\",\r\n\t\"Flags\":  3304740253564472344 ,  \"Session\""
                     " : \"s\",\n\n    \"LockIndex\":\n 7\n}]") ==
          entry("k", "", lock_flag_value, "s", 7));
    for (const char* body :
         {R"([{"Key": null}])", R"([{"Key":null}])", R"([{"Key":  null}])", "[{\"Key\":\n null}]",
          "[{\"Key\":\tnull}]", R"([{"Key" : null}])", R"([{"Flags": null,"Value": null}])"})
        CHECK(only_entry(body) == entry(""));
}

TEST_CASE("replies: KV lists refused", "[codec][reply]") {
    for (const char* body : {
             R"([{"Key":"k","Key":{}}])",                     // the last duplicate is not a string
             R"([{"Key":1}])",                                // a number
             R"([{"Key":true}])",                             // a boolean
             R"([{"Key":"k","Session":true}])",               //
             R"([{"Key":"k","LockIndex":"1"}])",              // a string for a number
             R"([{"Flags":"1"}])",                            //
             R"([{"Key":"k","Value":"YQ="}])",                // bad base64
             R"([{"Key":"k","Value":"Y Q=="}])",              //
             R"([{"Value":"x"}])",                            //
             R"([{"Key":"k","Flags":18446744073709551616}])", // too large
             R"([{"Flags":99999999999999999999}])",           //
             R"([{"Flags":33047402535644723440}])",           //
             R"([{"Key":"k","Flags":-1}])",                   // negative
             R"([{"Key":"k","ModifyIndex":1.0}])",            // a fraction
             R"([{"Flags":3304740253564472344.0}])",          //
             R"([{"Flags":1e2}])",                            // an exponent
             R"([{"Flags":3304740253564472344e1}])",          //
             R"([{"Flags":01}])",                             // a leading zero
             R"([{"Flags":3304740253564472344x}])",           // not a number
             R"([{"Key":"k"},null])",                         // not an object
             R"([{"Key":"k"},[]])",                           //
             R"([null])",                                     //
             R"({"Key":"k"})",                                // not an array
             R"("k")",                                        //
             "null",                                          //
             "",                                              // nothing
             R"([{"Key":"k"}] x)",                            // garbage after the document
             R"([{"Key":"k"}][])",                            // a second document
             R"([{"Key":"k",}])",                             // a trailing comma
             R"([{"Key":"k"},])",                             //
             R"([{"Key":"k"} /* c */])",                      // a comment
             "\xef\xbb\xbf[]",                                // a byte order mark
             R"([{"Key":"\ud800"}])",                         // a lone surrogate
             "[{\"Key\":\"\xff\"}]",                          // invalid UTF-8
             "[{\"Key\":\"a\x01\"}]",                         // a control character
             R"([{"Key":nul}])",                              // a broken literal
             R"([{"Key":nullx}])",                            // a longer word
             R"([{"Key": n}])",                               //
             R"([{"Flags": n}])",                             //
             R"([{"Key": Null}])",                            //
             "[",                                             // cut
             R"([{"Key":)",                                   //
             R"([{"Key": n)",                                 //
             R"([{"Key":"k)",                                 // cut in a string
             R"([{"Key":"k\)",                                // cut in an escape
             "[{\n  \"Key\": \"k\",\n  ",                     // cut between members
             "[{\n  \"Key\": \"k\",\n  \"",                   //
             R"([{"Flags": 3304740253564472344)",             // cut after a number
         }) {
        CHECK_FALSE(kv_ok(body));
    }
    CHECK_FALSE(kv_ok(std::string("[{\"Key\":\"k\"}]\0", 14))); // a NUL after it
}

TEST_CASE("replies: txn answers", "[codec][reply]") {
    CHECK(txn_of(R"({"Results":[],"Errors":null})")->results.empty());
    CHECK(txn_of(R"({"Results":null,"Errors":null})")->results.empty());
    CHECK(txn_of(R"({})")->results.empty());
    CHECK(txn_of(R"( { "Results" : [ ] , "Errors" : null } )")->results.empty());
    {
        const auto r = txn_of(
            R"({"Results":null,"Errors":[{"OpIndex":2,"What":"failed to set key \"a\", index is stale"},)"
            R"({"OpIndex":3,"What":"key \"\u00e9\" doesn't exist"}]})");
        REQUIRE(r);
        check_errors(r->errors, {{2, R"(failed to set key "a", index is stale)"},
                                 {3, "key \"\xC3\xA9\" doesn't exist"}});
    }
    // Errors elements: OpIndex 0 unless a non-negative integer, What empty unless a string.
    {
        const auto r =
            txn_of(R"({"Errors":[{},{"OpIndex":-1,"What":1},{"OpIndex":"2","What":null},)"
                   R"({"OpIndex":18446744073709551615,"What":[]},{"OpIndex":1.5,"X":{}},)"
                   R"({"OpIndex":null},{"OpIndex":1,"OpIndex":2,"What":"\u00e9"}]})");
        REQUIRE(r);
        check_errors(r->errors, {{0, ""},
                                 {0, ""},
                                 {0, ""},
                                 {std::size_t(~std::uint64_t(0)), ""},
                                 {0, ""},
                                 {0, ""},
                                 {2, "\xC3\xA9"}});
    }
    // Non-KV results are skipped, whatever they are; "Results"/"Errors" not arrays: ignored.
    {
        const auto r =
            txn_of(R"({"Results":[{"Node":{"Node":"n"}},null,1,"s",[{"KV":1}],{"kv":2},)"
                   R"({"KVX":{}},{"K":{}},{"KV":{"Key":"k"},"Other":[]}],"Errors":null})");
        REQUIRE(r);
        CHECK(r->results == std::vector<kv_entry>{entry("k")});
    }
    CHECK(txn_of(R"({"Results":[{"K\u0056":{"Key":"e"}}]})")->results ==
          std::vector<kv_entry>{entry("e")});
    CHECK(txn_of(R"({"Results":{"KV":1},"Errors":{"a":[1]}})")->results.empty());
    CHECK(txn_of(R"({"Results":"x","Errors":7,"Index":0,"KnownLeader":true})")->results.empty());
    CHECK(txn_of(R"({"Results":[{"KV":{}}],"Index":5,"KnownLeader":false,)"
                 R"("ConsistencyLevel":"leader\"s","NotModified":true,"LastContact":0})")
              ->results.size() == 1);
    for (const char* body : {R"({"KnownLeader":1})", R"({"Index":-1})", R"({"Other":1})"})
        CHECK(txn_ok(body));
    // Duplicate keys: the last "Results", "Errors", "KV" count.
    CHECK(txn_of(R"({"Results":[{"KV":1}],"Results":[{"KV":{"Key":"b"}}]})")->results ==
          std::vector<kv_entry>{entry("b")});
    CHECK(txn_of(R"({"Results":[],"Results":[]})")->results.empty());
    CHECK(txn_of(R"({"Errors":[1],"Errors":[{"OpIndex":1}],"Errors":null})")->errors.empty());
    CHECK(txn_of(R"({"Results":[{"KV":{"Key":1},"KV":{"Key":"k"}}]})")->results ==
          std::vector<kv_entry>{entry("k")});
    // Refused: a bad KV entry, a non-object error, not an object, bad JSON.
    for (const char* body : {
             R"({"Results":[{"KV":{"Key":"k"},"KV":null}]})",
             R"({"Results":[{"KV":{"Key":"k"}}],"Results":[{"KV":[]}]})",
             R"({"Results":[{"KV":null}]})",
             R"({"Results":[{"KV":{"Flags":-1}}]})",
             R"({"Results":[{"KV":{"Value":"x"}}]})",
             R"({"Results":[{"KV"}]})",
             R"({"Errors":[null]})",
             R"({"Errors":[[]]})",
             R"({"KnownLeader":truex})",
             "[]",
             "null",
             R"({"Results":[]} {})",
             R"({"Results":[)",
         }) {
        CHECK_FALSE(txn_ok(body));
    }
}

TEST_CASE("replies: txn answers append after what the result already holds", "[codec][reply]") {
    txn_result r;
    r.results.push_back(entry("before"));
    r.errors.resize(1);
    const std::string body = R"({"Results":[{"KV":{"Key":"k"}}],"Results":[{"KV":{"Key":"j"}}],)"
                             R"("Errors":[{"OpIndex":4}]})";
    REQUIRE(parse_txn_reply(body, r));
    CHECK(r.results == std::vector<kv_entry>{entry("before"), entry("j")});
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[1].op_index == 4);
    std::vector<kv_entry> list{entry("before")};
    REQUIRE(parse_kv_entries(R"([{"Key":"k"}])", list));
    CHECK(list == std::vector<kv_entry>{entry("before"), entry("k")});
}

TEST_CASE("replies: every value replaced by other types", "[codec][reply]") {
    const json::value kv_doc =
        json::parse(R"([{"LockIndex":1,"Key":"k","Flags":18446744073709551615,"Value":"YQ==",)"
                    R"("Session":"s","CreateIndex":2,"ModifyIndex":3,"Extra":{"a":[1]}}])");
    replace_each_value(kv_doc,
                       [](const std::string& path, const json::value& r, const std::string& body) {
                           bool want = true;
                           if (path.empty()) // the list: only a list of valid entries
                               want = r.is_array() && r.get_array().empty();
                           else if (path == "/[]")
                               want = kv_object(r);
                           else if (!path.starts_with("/[]/Extra"))
                               want = field_takes(path.substr(4), r);
                           CHECK(kv_ok(body) == want);
                       });
    const json::value txn_doc = json::parse(
        R"({"Results":[{"KV":{"LockIndex":1,"Key":"k","Flags":5,"Value":null,"Session":"s",)"
        R"("CreateIndex":2,"ModifyIndex":3}},{"Node":{}}],"Errors":[{"OpIndex":1,"What":"w"}]})");
    replace_each_value(txn_doc,
                       [](const std::string& path, const json::value& r, const std::string& body) {
                           bool want = true;
                           if (path.empty())
                               want = r.is_object();
                           else if (path == "/Results/[]/KV")
                               want = kv_object(r);
                           else if (path.starts_with("/Results/[]/KV/"))
                               want = field_takes(path.substr(15), r);
                           else if (path == "/Errors") // elements that are not objects
                               want = !r.is_array() || r.get_array().empty();
                           else if (path == "/Errors/[]")
                               want = r.is_object();
                           // Results, a result, Node and an error's members: anything goes.
                           CHECK(txn_ok(body) == want);
                       });
    // KV lists given to the txn parser and the other way round.
    CHECK_FALSE(txn_ok(json::serialize(kv_doc)));
    CHECK_FALSE(kv_ok(json::serialize(txn_doc)));
}

TEST_CASE("replies: truncated bodies and trailing garbage", "[codec][reply]") {
    const std::string kv_body =
        R"([{"Key":"a\u00e9","Value":"YQ==","Flags":18446744073709551615},{}])";
    using verdict = bool (*)(const std::string&);
    for (const auto& [body, ok] :
         {std::pair<std::string, verdict>{lock_answer, txn_ok}, {kv_body, kv_ok}}) {
        // Every prefix is cut inside the document, but the one without the final newline.
        const std::size_t end = body.find_last_not_of('\n') + 1;
        for (std::size_t n = 0; n < body.size(); ++n)
            CHECK(ok(body.substr(0, n)) == (n >= end));
        for (const char* tail : {" ", "\n\n"})
            CHECK(ok(body + tail));
        for (const char* tail : {"x", " {}", ",", "]", "}", " null", "/* c */"})
            CHECK_FALSE(ok(body + tail));
    }
}

TEST_CASE("replies: long escaped strings and keys", "[codec][reply]") {
    // Longer than Boost.JSON's stack buffer for unescaping (4 KB), so its parser hands
    // escaped strings over in parts.
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
    const kv_entry e = only_entry(body);
    CHECK(e.key.size() == 2 + 3000 * std::string("\xc3\xa9\"x").size());
    CHECK(e.key.substr(0, 6) == "k/\xc3\xa9\"x");
    CHECK(e.value.size() == 3 * 2000);
    CHECK(e.value.substr(0, 6) == "abcabc");
    CHECK(e.flags == 7);
    CHECK(e.session == "s");
    const std::string txn = R"({"Results":[{"KV":)" + body.substr(1, body.size() - 2) +
                            R"(}],"Errors":[{"OpIndex":1,"What":")" + key + R"("}]})";
    const auto r = txn_of(txn);
    REQUIRE(r);
    REQUIRE(r->results.size() == 1);
    CHECK(r->results[0] == e);
    REQUIRE(r->errors.size() == 1);
    CHECK(r->errors[0].what == e.key);
}

TEST_CASE("replies: damaged answers are refused or read, never more", "[codec][reply]") {
    std::vector<std::string> lists;
    std::vector<std::string> txns;
    const auto g = conclave::test::load_golden_replies();
    for (const auto& v : g.kv_lists)
        for (auto& body : both_formats(v))
            lists.push_back(std::move(body));
    for (const auto& v : g.txns)
        for (auto& body : both_formats(v))
            txns.push_back(std::move(body));
    std::mt19937 rng(20240611);
    std::size_t accepted = 0;
    std::size_t refused = 0;
    for (int round = 0; round < 100; ++round) {
        for (const auto& body : lists) {
            std::vector<kv_entry> out;
            (parse_kv_entries(damage(body, rng), out) ? accepted : refused)++;
        }
        for (const auto& body : txns) {
            txn_result out;
            (parse_txn_reply(damage(body, rng), out) ? accepted : refused)++;
        }
    }
    // Harmless edits (in whitespace, digits, letters of strings) are read, the rest refused.
    INFO("accepted " << accepted << ", refused " << refused);
    CHECK(accepted > 500);
    CHECK(refused > 500);
}
