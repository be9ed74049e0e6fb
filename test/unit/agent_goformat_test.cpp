// SPDX-License-Identifier: BSL-1.0
// Sans-I/O pieces of the dev agent that reproduce Go's wire behaviour: encoding/json
// errors and answers, go-memdb's UUID error texts, net/url and net/http helpers. (Go's
// strconv, base64, durations and JSON text: the go_*_test.cpp files.)
#include "devagent/src/go/gojson.hpp"
#include "devagent/src/go/goutil.hpp"
#include "devagent/src/server/http_types.hpp"
#include "devagent/src/store/blocking.hpp"
#include "support/catch.hpp"

#include <boost/json.hpp>

using namespace conclave::dev::detail;

namespace {

std::string decode_error(std::string_view in) {
    return gojson::decode_first(in).error;
}

} // namespace

TEST_CASE("agent: JSON syntax errors read like encoding/json's", "[unit][agent]") {
    CHECK(decode_error("not json") == "invalid character 'o' in literal null (expecting 'u')");
    CHECK(decode_error("{bad json") ==
          "invalid character 'b' looking for beginning of object key string");
    CHECK(decode_error("") == "EOF");
    CHECK(decode_error(" \n\t") == "EOF");
    CHECK(decode_error("{\"a\":") == "unexpected EOF");
    CHECK(decode_error("[1,]") == "invalid character ']' looking for beginning of value");
    CHECK(decode_error("{\"a\" 1}") == "invalid character '1' after object key");
    CHECK(decode_error("{\"a\":1 \"b\"}") == "invalid character '\"' after object key:value pair");
    CHECK(decode_error("[1 2]") == "invalid character '2' after array element");
    CHECK(decode_error("\"a\x01\"") == "invalid character '\\x01' in string literal");
    CHECK(decode_error("\"\\q\"") == "invalid character 'q' in string escape code");
    CHECK(decode_error("\"\\u12x4\"") ==
          "invalid character 'x' in \\u hexadecimal character escape");
    CHECK(decode_error("-x") == "invalid character 'x' in numeric literal");
    CHECK(decode_error("1.x") == "invalid character 'x' after decimal point in numeric literal");
    CHECK(decode_error("1ex") == "invalid character 'x' in exponent of numeric literal");
    CHECK(decode_error("tru") == "unexpected EOF");
    CHECK(decode_error("fals3") == "invalid character '3' in literal false (expecting 'e')");
    CHECK(decode_error("'x'") == "invalid character '\\'' looking for beginning of value");
    CHECK(decode_error("\xC3\xA9") ==
          "invalid character '\xC3\x83' looking for beginning of value");
    CHECK(decode_error(std::string(10001, '[')) == "invalid character '[' exceeded max depth");

    // The decoder takes the first value and ignores the rest.
    CHECK(decode_error("{} trailing").empty());
    CHECK(decode_error("01").empty());
    CHECK(decode_error("truex").empty());

    // Where Boost.JSON's parser stops elsewhere than Go's scanner: at the start of a word,
    // past a bad \u digit that ends the string, inside a number's exponent.
    CHECK(decode_error("[truex]") == "invalid character 'x' after array element");
    CHECK(decode_error("[true x]") == "invalid character 'x' after array element");
    CHECK(decode_error("n-3") == "invalid character '-' in literal null (expecting 'u')");
    CHECK(decode_error("[te]") == "invalid character 'e' in literal true (expecting 'r')");
    CHECK(decode_error("-fx") == "invalid character 'f' in numeric literal");
    CHECK(decode_error("\"\\u\"c00\"") ==
          "invalid character '\"' in \\u hexadecimal character escape");
    CHECK(decode_error("\"\\u\\0000\"") ==
          "invalid character '\\\\' in \\u hexadecimal character escape");
    CHECK(decode_error(R"({"a":1 "b"})") == "invalid character '\"' after object key:value pair");
    CHECK(decode_error(R"({"a" true})") == "invalid character 't' after object key");
    CHECK(decode_error(R"({"a":1,})") ==
          "invalid character '}' looking for beginning of object key string");
    CHECK(decode_error("[1e5x]") == "invalid character 'x' after array element");
    CHECK(decode_error("[01]") == "invalid character '1' after array element");
    CHECK(decode_error("[-]") == "invalid character ']' in numeric literal");
    CHECK(decode_error("1e+") == "unexpected EOF");
    CHECK(decode_error("1.") == "unexpected EOF");
    CHECK(decode_error(std::string(1000, '[')) == "unexpected EOF");
    // Deeper than the agent's limit (1,000 levels; Go's is 10,000).
    CHECK(decode_error(std::string(1001, '[')).find("exceeded max depth") != std::string::npos);
}

TEST_CASE("agent: what Go reads and Boost.JSON's parser refuses", "[unit][agent]") {
    // An exponent past the parser's range: Go keeps the literal (and refuses it as a uint64
    // later, quoting it).
    auto r = gojson::decode_first("[1e99999999999999999999, 2E+123456789012345]");
    REQUIRE(r.v);
    CHECK(r.v->items.at(0).text == "1e99999999999999999999");
    CHECK(r.v->items.at(1).text == "2E+123456789012345");
    // Lone surrogates and invalid UTF-8, in keys and values, read as U+FFFD.
    r = gojson::decode_first(R"(["\ud800\ud800\udc00\udc00", "\udc00\ud800"])");
    REQUIRE(r.v);
    CHECK(r.v->items.at(0).text == "\xEF\xBF\xBD\xF0\x90\x80\x80\xEF\xBF\xBD");
    CHECK(r.v->items.at(1).text == "\xEF\xBF\xBD\xEF\xBF\xBD");
    r = gojson::decode_first("{\"k\\ud800\xff\":\"\xc3\xed\xa0\x80\"}");
    REQUIRE(r.v);
    REQUIRE(r.v->members.size() == 1);
    CHECK(r.v->members[0].first == "k\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK(r.v->members[0].second.text == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    // A surrogate escape still checked as one: a bad digit is reported.
    CHECK(decode_error(R"(["\ud800", "\ud8x0"])") ==
          "invalid character 'x' in \\u hexadecimal character escape");
}

TEST_CASE("agent: parsed JSON keeps number literals and decodes strings like Go", "[unit][agent]") {
    const auto r = gojson::decode_first(
        R"({"n": 16210313421097356768, "f": 2.5, "s": "a\u00e9\ud83d\ude00\ud800x", "l": [true, null]})");
    REQUIRE(r.v);
    const gojson::value& v = *r.v;
    REQUIRE(v.k == gojson::kind::object);
    CHECK(gojson::find_field(v, "n")->text == "16210313421097356768");
    CHECK(gojson::find_field(v, "F")->text == "2.5"); // case-insensitive match
    CHECK(gojson::find_field(v, "s")->text == "a\xC3\xA9\xF0\x9F\x98\x80\xEF\xBF\xBDx");
    const gojson::value* l = gojson::find_field(v, "l");
    REQUIRE(l->items.size() == 2);
    CHECK(l->items[0].b);
    CHECK(l->items[1].is_null());
    CHECK(gojson::describe(*l) == "array");
    CHECK(gojson::type_error("number", "", "TTL", "string") ==
          "json: cannot unmarshal number into Go struct field .TTL of type string");
    CHECK(gojson::type_error("object", "", "", "api.TxnOps") ==
          "json: cannot unmarshal object into Go value of type api.TxnOps");
}

// The layout and escaping are codec::go::marshal_indent's (go_json_text_test.cpp).
TEST_CASE("agent: JSON answers are MarshalIndent's with a final newline", "[unit][agent]") {
    boost::json::object o;
    o["a"] = "<";
    o["e"] = boost::json::array{};
    CHECK(gojson::answer_body(o) == "{\n    \"a\": \"\\u003c\",\n    \"e\": []\n}\n");
}

TEST_CASE("agent: UUID error texts", "[unit][agent]") {
    const auto ok = memdb_uuid("3EA9F9A8-F4F0-AC60-9DF0-53C3B32A6DEF");
    REQUIRE(ok.bytes);
    CHECK(*ok.bytes == *memdb_uuid("3ea9f9a8-f4f0-ac60-9df0-53c3b32a6def").bytes);
    CHECK(memdb_uuid("not-a-uuid").error == "UUID must be 36 characters");
    CHECK(memdb_uuid(std::string(36, '-')).error == "UUID should have maximum of 4 \"-\"; got 36");
    CHECK(memdb_uuid("01234567890123456789012345678901234-").error ==
          "Input (without hyphens) must be even length");
    CHECK(memdb_uuid(std::string(36, 'x')).error ==
          "Invalid UUID: encoding/hex: invalid byte: U+0078 'x'");
    // The bytes are the hex pairs of the text without its hyphens, wherever they are.
    CHECK(*ok.bytes == "\x3e\xa9\xf9\xa8\xf4\xf0\xac\x60\x9d\xf0\x53\xc3\xb3\x2a\x6d\xef");
    CHECK(memdb_uuid("3-EA9F9A8F4F0AC609DF053C3B32A6DE-F--").bytes == ok.bytes);
    CHECK(memdb_uuid("3ea9f9a8f4f0ac609df053c3b32a6def0123").bytes->size() == 18);
    CHECK(memdb_uuid("-----0000000000000000000000000000000").error ==
          "UUID should have maximum of 4 \"-\"; got 5");
    CHECK(memdb_uuid("0123456789abcdef0123456789abcdef0123").bytes);
    // The first bad byte of the text, after the hyphen and length checks.
    CHECK(memdb_uuid("3ea9f9a8-f4f0-ac60-9df0-53c3b32a6dez").error ==
          "Invalid UUID: encoding/hex: invalid byte: U+007A 'z'");
    CHECK(memdb_uuid("3ea9f9a8-f4f0-ac60-9df0-53c3b32a\x01\x02"
                     "ef")
              .error == "Invalid UUID: encoding/hex: invalid byte: U+0001");
    CHECK(memdb_uuid("g-a9f9a8-f4f0-ac60-9df0-53c3b32a6de-").error ==
          "UUID should have maximum of 4 \"-\"; got 6");
    CHECK(memdb_uuid("g1234567890123456789012345678901234-").error ==
          "Input (without hyphens) must be even length");
    CHECK(memdb_uuid("g3ea9f9a8-f4f0-ac60-9df0-53c3b32a6de").error ==
          "Invalid UUID: encoding/hex: invalid byte: U+0067 'g'");
    CHECK(memdb_uuid("3ea9f9a8-f4f0-ac60-9df0-53c3b32a6d\xffg").error ==
          "Invalid UUID: encoding/hex: invalid byte: U+00FF '\xc3\xbf'");
}

// canonical_uuid_key is find_session's allocation-free way to memdb_uuid's key: it takes
// only texts memdb_uuid accepts, with the same key; the usual ID in either case.
TEST_CASE("agent: canonical_uuid_key agrees with memdb_uuid", "[unit][agent]") {
    char raw[16];
    const std::string id = "3ea9f9a8-f4f0-ac60-9df0-53c3b32a6def";
    REQUIRE(canonical_uuid_key(id, raw));
    CHECK(std::string(raw, 16) == *memdb_uuid(id).bytes);
    REQUIRE(canonical_uuid_key("3EA9F9A8-F4F0-AC60-9DF0-53C3B32A6DEF", raw));
    CHECK(std::string(raw, 16) == *memdb_uuid(id).bytes);
    // Valid for memdb_uuid but not canonical: left to it.
    CHECK_FALSE(canonical_uuid_key("3-EA9F9A8F4F0AC609DF053C3B32A6DE-F--", raw));
    CHECK_FALSE(canonical_uuid_key("3ea9f9a8f4f0ac609df053c3b32a6def0123", raw));
    CHECK_FALSE(canonical_uuid_key("3ea9f9a8-f4f0-ac60-9df0-53c3b32a6de", raw));
    CHECK_FALSE(canonical_uuid_key("", raw));

    // Every byte at every position of the canonical text.
    for (std::size_t at = 0; at < id.size(); ++at) {
        for (int b = 0; b < 256; ++b) {
            std::string s = id;
            s[at] = char(b);
            const auto general = memdb_uuid(s);
            INFO("byte " << b << " at " << at);
            if (canonical_uuid_key(s, raw)) {
                REQUIRE(general.bytes);
                CHECK(std::string(raw, 16) == *general.bytes);
            } else {
                // Declined: a hyphen moved, or a byte memdb_uuid refuses as well.
                CHECK((b == '-' || at == 8 || at == 13 || at == 18 || at == 23 || !general.bytes));
            }
        }
    }
}

TEST_CASE("agent: query strings, paths and content sniffing follow net/url and net/http",
          "[unit][agent]") {
    const query_params q = parse_query("b=2&a=1&flag&bad=%zz&sp=x+y%20z;semi=1&a=3");
    CHECK(q.has("flag"));
    CHECK(q.get("flag").empty());
    CHECK_FALSE(q.has("bad"));
    CHECK(q.get("sp") == "x y z");
    CHECK(q.get("semi") == "1");
    CHECK(q.get("a") == "1");
    CHECK(q.encode() == "a=1&a=3&b=2&flag=&semi=1&sp=x+y+z");

    CHECK(path_unescape("/v1/kv/a%2Fb%3Fc").value() == "/v1/kv/a/b?c");
    CHECK_FALSE(path_unescape("/v1/kv/%zz"));
    CHECK_FALSE(path_unescape("/v1/kv/%4"));
    CHECK(path_escape("/v1/kv/a b?c") == "/v1/kv/a%20b%3Fc");

    CHECK(clean_path("/v1/kv//x") == "/v1/kv/x");
    CHECK(clean_path("/v1/kv/a/../b") == "/v1/kv/b");
    CHECK(clean_path("/v1/kv/dir/") == "/v1/kv/dir/");
    CHECK(clean_path("/v1/kv/./x/") == "/v1/kv/x/");
    CHECK(clean_path("/v1/kv/.") == "/v1/kv");
    CHECK(clean_path("/../x") == "/x");

    CHECK(sniff_content_type("test") == "text/plain; charset=utf-8");
    CHECK(sniff_content_type("{\"a\":1}") == "text/plain; charset=utf-8");
    CHECK(sniff_content_type("  <HTML><body>") == "text/html; charset=utf-8");
    CHECK(sniff_content_type("<html") == "text/plain; charset=utf-8");
    CHECK(sniff_content_type(std::string("a\x00b", 3)) == "application/octet-stream");
    CHECK(sniff_content_type("\x89PNG\r\n\x1A\n....") == "image/png");
}

TEST_CASE("agent: blocking query options and timeouts", "[unit][agent]") {
    CHECK(parse_query_opts(parse_query("wait=abc")).error == "Invalid wait time");
    CHECK(parse_query_opts(parse_query("index=1&wait=10")).error == "Invalid wait time");
    CHECK(parse_query_opts(parse_query("index=-1")).error == "Invalid index");
    CHECK(parse_query_opts(parse_query("stale&consistent")).error ==
          "Cannot specify ?stale with ?consistent, conflicting semantics.");
    const auto ok = parse_query_opts(parse_query("index=42&wait=1m30s&stale"));
    CHECK(ok.error.empty());
    CHECK(ok.opts.min_index == 42);
    CHECK(ok.opts.wait == std::chrono::seconds(90));

    std::mt19937_64 rng(7);
    using namespace std::chrono;
    for (int i = 0; i < 200; ++i) {
        const auto one = query_timeout(seconds(1), rng);
        CHECK(one >= seconds(1));
        CHECK(one < milliseconds(1062) + microseconds(500));
        const auto dflt = query_timeout(nanoseconds(0), rng);
        CHECK(dflt >= seconds(300));
        CHECK(dflt < milliseconds(318750));
        const auto clamped = query_timeout(minutes(20), rng);
        CHECK(clamped >= seconds(600));
        CHECK(clamped < milliseconds(637500));
    }
}
