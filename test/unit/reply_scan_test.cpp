// The fast path of the reply parsers (codec/reply_scan) against the SAX parser: a body the
// scanner takes must get the SAX parser's result, field by field; a body the SAX parser
// refuses must never be taken; a declined body leaves the output alone; and the answers
// Consul sends, indented (dev mode) or compact, are taken.
#include "codec/json.hpp"
#include "codec/reply_parser.hpp"
#include "codec/reply_scan.hpp"
#include "dev/gojson.hpp"
#include "golden_steps.hpp"

#include <conclave/types.hpp>

#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace conclave;
using namespace conclave::codec;
namespace gojson = conclave::dev::detail::gojson;

namespace {

// Both parsers append after what the output already holds.
kv_entry earlier_entry() {
    kv_entry e;
    e.key = "earlier";
    e.value = "v";
    e.flags = 9;
    return e;
}

txn_error earlier_error() {
    txn_error e;
    e.op_index = 7;
    e.what = "earlier";
    return e;
}

// How two outputs differ, field by field ("" when they do not).
std::string diff(const std::vector<kv_entry>& a, const std::vector<kv_entry>& b) {
    if (a.size() != b.size())
        return "entry counts " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) +
               "\n";
    std::ostringstream out;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto field = [&](const char* name, const auto& x, const auto& y) {
            if (x != y)
                out << "entry " << i << " " << name << ": " << x << " vs " << y << "\n";
        };
        field("key", a[i].key, b[i].key);
        field("value", a[i].value, b[i].value);
        field("flags", a[i].flags, b[i].flags);
        field("lock_index", a[i].lock_index, b[i].lock_index);
        field("session", a[i].session, b[i].session);
        field("create_index", a[i].create_index, b[i].create_index);
        field("modify_index", a[i].modify_index, b[i].modify_index);
    }
    return out.str();
}

std::string diff(const std::vector<txn_error>& a, const std::vector<txn_error>& b) {
    if (a.size() != b.size())
        return "error counts " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) +
               "\n";
    std::ostringstream out;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].op_index != b[i].op_index)
            out << "error " << i << " op_index: " << a[i].op_index << " vs " << b[i].op_index
                << "\n";
        if (a[i].what != b[i].what)
            out << "error " << i << " what: " << a[i].what << " vs " << b[i].what << "\n";
    }
    return out.str();
}

std::string diff(const txn_result& a, const txn_result& b) {
    return diff(a.results, b.results) + diff(a.errors, b.errors);
}

// The scanner, the SAX parser alone and the two together (parse_*) on `body`; what is wrong
// ("" if nothing) and whether the scanner took the body.
template <class Out, class Scan, class Sax, class Both>
std::string compare(const std::string& body, const Out& before, Scan scan, Sax sax, Both both,
                    bool& taken) {
    Out fast_out = before;
    Out sax_out = before;
    Out both_out = before;
    taken = scan(body, fast_out);
    const bool sax_ok = sax(body, sax_out);
    const bool both_ok = both(body, both_out);
    std::string problem;
    if (both_ok != sax_ok)
        problem += "parse and SAX verdicts differ\n";
    else if (sax_ok)
        problem += diff(both_out, sax_out);
    if (taken && !sax_ok)
        problem += "the scanner took a body the SAX parser refuses\n";
    else if (taken)
        problem += diff(fast_out, sax_out);
    else
        problem += diff(fast_out, before); // declined: untouched
    return problem;
}

// Checks `body` as a KV list; returns whether the scanner took it.
bool check_entries(const std::string& body) {
    bool taken = false;
    const std::string problem = compare(
        body, std::vector<kv_entry>{earlier_entry()},
        [](std::string_view b, std::vector<kv_entry>& o) { return scan_kv_entries(b, o); },
        [](std::string_view b, std::vector<kv_entry>& o) { return sax_kv_entries(b, o); },
        [](std::string_view b, std::vector<kv_entry>& o) { return parse_kv_entries(b, o); }, taken);
    INFO("body: " << body);
    CHECK(problem == "");
    return taken;
}

// Checks `body` as a txn answer; returns whether the scanner took it.
bool check_txn(const std::string& body) {
    txn_result before;
    before.results.push_back(earlier_entry());
    before.errors.push_back(earlier_error());
    bool taken = false;
    const std::string problem = compare(
        body, before, [](std::string_view b, txn_result& o) { return scan_txn_reply(b, o); },
        [](std::string_view b, txn_result& o) { return sax_txn_reply(b, o); },
        [](std::string_view b, txn_result& o) { return parse_txn_reply(b, o); }, taken);
    INFO("body: " << body);
    CHECK(problem == "");
    return taken;
}

// --- realistic answers -----------------------------------------------------------------------

kv_entry make_entry(std::size_t i, bool locked, std::string value) {
    kv_entry e;
    e.key = "service/app-" + std::to_string(i) + "/leader";
    e.value = std::move(value);
    e.flags = i % 3 == 0 ? lock_flag_value : i % 3 == 1 ? 0 : ~std::uint64_t(0);
    e.lock_index = locked ? i + 1 : 0;
    if (locked)
        e.session = "adf4238a-882b-9ddc-4a9d-5b6758e4159" + std::to_string(i % 10);
    e.create_index = 12 + i;
    e.modify_index = 1000000 + 7 * i;
    return e;
}

std::vector<kv_entry> make_entries(std::size_t n) {
    std::vector<kv_entry> out;
    for (std::size_t i = 0; i < n; ++i) {
        std::string value;
        for (std::size_t j = 0; j < i % 7; ++j) // 0..6 bytes: every padding, every byte value
            value += char((i * 37 + j * 101) % 256);
        out.push_back(make_entry(i, i % 2 == 0, value));
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

// The answers of a lock cycle and its neighbours, as json values.
struct realistic {
    std::vector<json::value> kv_lists;
    std::vector<json::value> txns;
};

realistic realistic_answers() {
    realistic r;
    for (std::size_t n : {0, 1, 2, 3, 40})
        r.kv_lists.push_back(kv_list_json(make_entries(n)));
    std::vector<txn_error> errors(1);
    errors[0].what = R"(failed to lock key "service/leader", lock is already held)";
    txn_error stale;
    stale.op_index = 2;
    stale.what = "failed to set key \"a/b\", index is stale\tand\\or /gone/";
    const std::vector<std::vector<txn_error>> error_sets = {{}, errors, {errors[0], stale}};
    for (bool read_only : {false, true}) {
        for (std::size_t n : {0, 1, 2, 40})
            r.txns.push_back(txn_json(make_entries(n), {}, read_only));
        r.txns.push_back(txn_json({}, errors, read_only));
        r.txns.push_back(txn_json({}, {errors[0], stale}, read_only));
    }
    return r;
}

// A body in both of Consul's formats.
std::vector<std::string> both_formats(const json::value& v) {
    return {gojson::marshal_indent(v), gojson::marshal(v)};
}

// Whether the scanner is meant to take `body`: it has no \u escape and only ASCII.
bool plain_ascii(const std::string& body) {
    for (char c : body)
        if (static_cast<unsigned char>(c) >= 0x80)
            return false;
    return body.find("\\u") == std::string::npos;
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

TEST_CASE("reply_scan: takes the answers Consul sends, indented and compact", "[codec][scan]") {
    const realistic r = realistic_answers();
    for (const auto& v : r.kv_lists)
        for (const auto& body : both_formats(v)) {
            INFO(body);
            CHECK(check_entries(body));
            std::vector<kv_entry> out;
            REQUIRE(scan_kv_entries(body, out));
            CHECK(diff(out, std::vector<kv_entry>(make_entries(v.as_array().size()))) == "");
        }
    for (const auto& v : r.txns)
        for (const auto& body : both_formats(v)) {
            INFO(body);
            CHECK(check_txn(body));
        }
    // The dev agent's answer to a lock + get transaction (two entries).
    const std::string acquire = R"({
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
        },
        {
            "KV": {
                "LockIndex": 1,
                "Key": "service/leader",
                "Flags": 3304740253564472344,
                "Value": "aG9sZGVy",
                "Session": "adf4238a-882b-9ddc-4a9d-5b6758e4159e",
                "CreateIndex": 12,
                "ModifyIndex": 13
            }
        }
    ],
    "Errors": null
}
)";
    txn_result out;
    REQUIRE(scan_txn_reply(acquire, out));
    REQUIRE(out.results.size() == 2);
    CHECK(out.results[0].key == "service/leader");
    CHECK(out.results[0].flags == lock_flag_value);
    CHECK(out.results[0].value.empty());
    CHECK(out.results[0].session == "adf4238a-882b-9ddc-4a9d-5b6758e4159e");
    CHECK(out.results[0].lock_index == 1);
    CHECK(out.results[0].create_index == 12);
    CHECK(out.results[0].modify_index == 13);
    CHECK(out.results[1].value == "holder");
    CHECK(out.errors.empty());
    CHECK(check_txn(acquire));
    // A rollback, with Go's escapes in What.
    const std::string rollback =
        R"({"Results":null,"Errors":[{"OpIndex":0,"What":"failed to lock key \"k\", lock is already held"}]})";
    out = txn_result{};
    REQUIRE(scan_txn_reply(rollback, out));
    REQUIRE(out.errors.size() == 1);
    CHECK(out.errors[0].what == R"(failed to lock key "k", lock is already held)");
}

TEST_CASE("reply_scan: golden answers agree with the SAX parser", "[codec][scan]") {
    const auto g = conclave::test::load_golden_replies();
    REQUIRE(g.kv_lists.size() >= 10);
    REQUIRE(g.txns.size() >= 15);
    for (const auto& v : g.kv_lists)
        for (const auto& body : both_formats(v)) {
            INFO(body);
            CHECK(check_entries(body) == plain_ascii(body));
            CHECK_FALSE(check_txn(body));
        }
    for (const auto& v : g.txns)
        for (const auto& body : both_formats(v)) {
            INFO(body);
            CHECK(check_txn(body) == plain_ascii(body));
            CHECK_FALSE(check_entries(body));
        }
}

TEST_CASE("reply_scan: edge cases", "[codec][scan]") {
    // Taken: whitespace anywhere, empty containers, nulls, escapes, missing fields.
    CHECK(check_entries("[]"));
    CHECK(check_entries(" \t\r\n[ ]\n\n"));
    CHECK(check_entries("[{}]"));
    CHECK(check_entries("[\n{ } ,{}\r\n]"));
    CHECK(check_entries(R"([{"Key":"a\/b\"c\\d\n\t\r\b\f","Session":"","Value":""}])"));
    CHECK(check_entries(R"([{"Key":null,"Session":null,"Value":null,"Flags":null,)"
                        R"("LockIndex":null,"CreateIndex":null,"ModifyIndex":null}])"));
    CHECK(
        check_entries(R"([{"ModifyIndex":0,"CreateIndex":18446744073709551615,"Value":"AP8="}])"));
    CHECK(check_entries("[{\"Key\":\"\x7f ~\"}]"));
    CHECK(check_txn("{}"));
    CHECK(check_txn(R"( { "Results" : [ ] , "Errors" : null } )"));
    CHECK(check_txn(R"({"Errors":[{},{"What":"w"},{"OpIndex":3}],"Results":null})"));
    CHECK(check_txn(R"({"Results":[{ "KV" : {}},{"KV":{}},{"KV":  {"Key":"k"}}]})"));
    CHECK(check_txn(R"({"Results":[{"KV":{}}],"Index":5,"KnownLeader":false,)"
                    R"("ConsistencyLevel":"leader\"s","NotModified":true,"LastContact":0})"));

    // Declined, whatever the SAX parser says of them.
    for (const char* body : {
             R"([{"Key":"\u0041"}])",               // \u escape
             "[{\"Key\":\"\xc3\xa9\"}]",            // non-ASCII
             "[{\"Key\":\"\xff\"}]",                // invalid UTF-8
             "[{\"Key\":\"a\x01\"}]",               // control character
             R"([{"Key":"a","Key":"b"}])",          // a duplicate key
             R"([{"Key":"a","Unknown":1}])",        // an unknown key
             R"([{"K\u0065y":"a"}])",               // an escaped key
             R"([{"Value":"\/w=="}])",              // an escaped Value
             R"([{"Value":"YQ="}])",                // bad base64
             R"([{"Value":"Y Q=="}])",              // bad base64
             R"([{"Flags":18446744073709551616}])", // too large
             R"([{"Flags":99999999999999999999}])", // too large
             R"([{"Flags":01}])",                   // a leading zero
             R"([{"Flags":-0}])",                   // a sign
             R"([{"Flags":-1}])",                   // negative
             R"([{"Flags":1.0}])",                  // a fraction
             R"([{"Flags":1e2}])",                  // an exponent
             R"([{"Flags":"1"}])",                  // a string
             R"([{"Key":1}])",                      // a number
             R"([{"Key":true}])",                   // a boolean
             R"([{"Key":nul}])",                    // a broken literal
             R"([{"Key":nullx}])",                  // a longer word
             R"([{"Key":"k"},])",                   // a trailing comma
             R"([{"Key":"k",}])",                   // a trailing comma
             R"([{"Key":"k"}] x)",                  // garbage after the document
             R"([{"Key":"k"}][])",                  // a second document
             "\xef\xbb\xbf[]",                      // a byte order mark
             R"([{"Key":"k"} /* c */])",            // a comment
             R"([null])",                           // not an object
             R"({"Key":"k"})",                      // not an array
             "",                                    // nothing
             "[",                                   // cut
             R"([{"Key":"k)",                       // cut in a string
             R"([{"Key":"k\)",                      // cut in an escape
         }) {
        CHECK_FALSE(check_entries(body));
    }
    CHECK_FALSE(check_entries(std::string("[{\"Key\":\"k\"}]\0", 14))); // a NUL after it
    for (const char* body : {
             R"({"Results":[{"Node":{}}]})",                         // not a KV result
             R"({"Results":[{"KVX":{}}]})",                          // a longer key
             R"({"Results":[{"K":{}}]})",                            // a shorter key
             R"({"Results":[{"K\u0056":{}}]})",                      // an escaped key
             R"({"Results":[{"KV"}]})",                              // no colon
             R"({"Results":[{"KV":{"Key":"k"},"KV":{"Key":"j"}}]})", // a duplicate KV
             R"({"Results":[{"KV":{"Key":"k"}},null]})",             // not an object
             R"({"Results":[],"Results":[]})",                       // a duplicate member
             R"({"Results":{"KV":1}})",                              // not an array
             R"({"Results":[{"KV":null}]})",                         // a null KV
             R"({"Errors":[{"OpIndex":null}]})",                     // a null OpIndex
             R"({"Errors":[{"OpIndex":1,"OpIndex":2}]})",            // a duplicate key
             R"({"Errors":[{"What":1}]})",                           // a number for What
             R"({"Errors":[null]})",                                 // not an object
             R"({"Errors":[{"What":"\u00e9"}]})",                    // a \u escape
             R"({"KnownLeader":truex})",                             // a longer word
             R"({"KnownLeader":1})",                                 // not a boolean
             R"({"Index":-1})",                                      // negative
             R"({"Other":1})",                                       // an unknown member
             R"({"Results":[]} {})",                                 // a second document
             R"({"Results":[)",                                      // cut
             "[]",                                                   // not an object
         }) {
        CHECK_FALSE(check_txn(body));
    }
}

TEST_CASE("reply_scan: damaged answers agree with the SAX parser", "[codec][scan]") {
    std::vector<std::string> lists;
    std::vector<std::string> txns;
    const auto g = conclave::test::load_golden_replies();
    const realistic r = realistic_answers();
    for (const auto* values : {&g.kv_lists, &r.kv_lists})
        for (const auto& v : *values)
            for (auto& body : both_formats(v))
                lists.push_back(std::move(body));
    for (const auto* values : {&g.txns, &r.txns})
        for (const auto& v : *values)
            for (auto& body : both_formats(v))
                txns.push_back(std::move(body));
    std::mt19937 rng(20240611);
    std::size_t taken = 0;
    std::size_t declined = 0;
    for (int round = 0; round < 400; ++round) {
        for (const auto& body : lists)
            (check_entries(damage(body, rng)) ? taken : declined)++;
        for (const auto& body : txns)
            (check_txn(damage(body, rng)) ? taken : declined)++;
    }
    // Both kinds are common: harmless edits (in whitespace, digits, letters of strings) are
    // taken, the rest declined.
    INFO("taken " << taken << ", declined " << declined);
    CHECK(taken > 1000);
    CHECK(declined > 1000);
}

TEST_CASE("reply_scan: KVPair members after whitespace unlike the first member's",
          "[codec][scan]") {
    // After the first member, a member whose comma, whitespace and quote are those of the
    // first is taken at once; any other whitespace goes the long way, and must give the same
    // result. Indentations of every length cover the comparison of short, whole and
    // partial words.
    for (std::size_t k = 0; k <= 20; ++k) {
        const std::string first = k == 0 ? "" : "\n" + std::string(k, ' ');
        std::vector<std::string> others{first, first + " ", first + "\t", " " + first, "", "\r\n"};
        if (!first.empty())
            others.push_back(first.substr(0, first.size() - 1));
        for (std::size_t at = 0; at < first.size(); ++at) {
            std::string tab = first;
            tab[at] = '\t';
            others.push_back(tab);
            std::string wrong = first;
            wrong[at] = 'x'; // not whitespace: declined
            const std::string body = "[{" + first + R"("Key": "k",)" + wrong + R"("Flags": 1}])";
            CHECK_FALSE(check_entries(body));
        }
        for (const auto& other : others) {
            const std::string body =
                "[{" + first + R"("Key": "k",)" + other + R"("Flags": 3304740253564472344,)" +
                other + R"("Session": "s",)" + first + R"("LockIndex": 7)" + first + "}]";
            INFO("indentation " << k);
            CHECK(check_entries(body));
            std::vector<kv_entry> out;
            REQUIRE(scan_kv_entries(body, out));
            REQUIRE(out.size() == 1);
            CHECK(out[0].key == "k");
            CHECK(out[0].flags == lock_flag_value);
            CHECK(out[0].session == "s");
            CHECK(out[0].lock_index == 7);
        }
    }
    // A separator cut short by the end of the body.
    CHECK_FALSE(check_entries("[{\n  \"Key\": \"k\",\n  "));
    CHECK_FALSE(check_entries("[{\n  \"Key\": \"k\",\n  \""));
}

TEST_CASE("reply_scan: the lock flags and its neighbours", "[codec][scan]") {
    // Go's lock flags are compared as text: they must read as the number they are, and
    // anything longer, shorter or different must read as number() reads it, or be declined.
    const std::vector<std::pair<std::string, bool>> flags{
        {"3304740253564472344", true},    {"3304740253564472345", true},
        {"3304740253564472343", true},    {"330474025356447234", true},
        {"13304740253564472344", true},   {"33047402535644723440", false},
        {"33047402535644723449", false},  {"3304740253564472344.0", false},
        {"3304740253564472344e1", false}, {"3304740253564472344x", false},
        {"3304740253564472344 ", true},   {"16210313421097356768", true},
        {"18446744073709551615", true},   {"18446744073709551616", false},
    };
    for (const auto& [text, taken] : flags) {
        for (const char* gap : {"", " ", "  ", "\n"}) {
            const std::string body = std::string(R"([{"Flags":)") + gap + text + "}]";
            INFO(body);
            CHECK(check_entries(body) == taken);
        }
        // The digits at the very end of the body: declined, as the array is not closed.
        CHECK_FALSE(check_entries(R"([{"Flags": )" + text));
    }
    std::vector<kv_entry> out;
    REQUIRE(scan_kv_entries(R"([{"Flags": 3304740253564472344}])", out));
    CHECK(out.at(0).flags == lock_flag_value);
}

TEST_CASE("reply_scan: null and not quite null after a colon", "[codec][scan]") {
    for (const char* body :
         {R"([{"Key": null}])", R"([{"Key":null}])", R"([{"Key":  null}])", "[{\"Key\":\n null}]",
          "[{\"Key\":\tnull}]", R"([{"Key" : null}])", R"([{"Flags": null,"Value": null}])"})
        CHECK(check_entries(body));
    for (const char* body : {R"([{"Key": nul}])", R"([{"Key": nullx}])", R"([{"Key": n}])",
                             R"([{"Flags": n}])", R"([{"Key": Null}])", R"([{"Key":  nul}])",
                             R"([{"Key": )", R"([{"Key": n)", R"([{"Key":)"})
        CHECK_FALSE(check_entries(body));
}
