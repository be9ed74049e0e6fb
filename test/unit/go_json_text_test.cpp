// SPDX-License-Identifier: BSL-1.0
// Go's encoding/json output as codec/go/ reproduces it: strings escaped the HTML-safe way,
// MarshalIndent's layout, and the bytes its syntax errors name. Boost.JSON's serializer
// writes strings otherwise, which is why these are hand-written.
#include "codec/go/json_marshal.hpp"
#include "codec/go/json_text.hpp"
#include "support/catch.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using namespace conclave::codec::go;
namespace json = boost::json;

TEST_CASE("go json_string: json.Marshal's escaping", "[codec][go][json]") {
    CHECK(json_string("") == "\"\"");
    CHECK(json_string("plain text") == "\"plain text\"");
    CHECK(json_string("\"\\") == "\"\\\"\\\\\"");
    CHECK(json_string("<a&b>") == "\"\\u003ca\\u0026b\\u003e\"");
    CHECK(json_string("\n\r\t") == "\"\\n\\r\\t\"");
    CHECK(json_string("\b\f\x01\x1f") == "\"\\u0008\\u000c\\u0001\\u001f\"");
    CHECK(json_string("\x7f~ ") == "\"\x7f~ \"");
    CHECK(json_string("\xE2\x80\xA8\xE2\x80\xA9") == "\"\\u2028\\u2029\"");
    CHECK(json_string("caf\xC3\xA9 \xF0\x9F\x98\x80") == "\"caf\xC3\xA9 \xF0\x9F\x98\x80\"");
    // Each byte of invalid UTF-8 (stray, overlong, surrogate, truncated) is U+FFFD.
    CHECK(json_string("\xFF") == "\"\\ufffd\"");
    CHECK(json_string("\xC0\xAF") == "\"\\ufffd\\ufffd\"");
    CHECK(json_string("\xED\xA0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");
    CHECK(json_string("a\xE2\x80") == "\"a\\ufffd\\ufffd\"");

    std::string out = "x";
    append_json_string(out, "<");
    CHECK(out == "x\"\\u003c\"");
}

TEST_CASE("go marshal: compact and indented layouts", "[codec][go][json]") {
    json::object o;
    o["b"] = json::array{1, "x"};
    o["a"] = "<&>\xE2\x80\xA8\xFF\n";
    o["e"] = json::array{};
    o["o"] = json::object{};
    o["n"] = nullptr;
    o["u"] = std::uint64_t(18446744073709551615ULL);
    o["i"] = -3;
    o["t"] = true;
    CHECK(marshal(o) == "{\"b\":[1,\"x\"],\"a\":\"\\u003c\\u0026\\u003e\\u2028\\ufffd\\n\","
                        "\"e\":[],\"o\":{},\"n\":null,\"u\":18446744073709551615,\"i\":-3,"
                        "\"t\":true}");
    CHECK(marshal_indent(o, "    ") == "{\n"
                                       "    \"b\": [\n"
                                       "        1,\n"
                                       "        \"x\"\n"
                                       "    ],\n"
                                       "    \"a\": \"\\u003c\\u0026\\u003e\\u2028\\ufffd\\n\",\n"
                                       "    \"e\": [],\n"
                                       "    \"o\": {},\n"
                                       "    \"n\": null,\n"
                                       "    \"u\": 18446744073709551615,\n"
                                       "    \"i\": -3,\n"
                                       "    \"t\": true\n"
                                       "}");
    // consul kv export's layout: tabs.
    CHECK(marshal_indent(json::array{json::object{{"key", "k"}, {"flags", 0}}}, "\t") ==
          "[\n\t{\n\t\t\"key\": \"k\",\n\t\t\"flags\": 0\n\t}\n]");
    CHECK(marshal(json::value(true)) == "true");
    CHECK(marshal(json::value(nullptr)) == "null");
    CHECK(marshal_indent(json::array{}, "    ") == "[]");
    // Deeper than the 4-space fast path's 16 levels.
    json::value deep = 1;
    for (int i = 0; i < 20; ++i)
        deep = json::array{deep};
    const std::string text = marshal_indent(deep, "    ");
    CHECK(text.find("\n" + std::string(80, ' ') + "1\n") != std::string::npos);
}

TEST_CASE("go marshal: Go's float64 format", "[codec][go][json]") {
    CHECK(marshal(json::value(1.5)) == "1.5");
    CHECK(marshal(json::value(100.0)) == "100");
    CHECK(marshal(json::value(1e21)) == "1e+21");
    CHECK(marshal(json::value(1e-7)) == "1e-7");
    CHECK(marshal(json::value(0.000001)) == "0.000001");
}

TEST_CASE("go json_quote_char: the bytes of encoding/json's syntax errors", "[codec][go][json]") {
    CHECK(json_quote_char('\n') == "'\\n'");
    CHECK(json_quote_char('x') == "'x'");
    CHECK(json_quote_char('\'') == "'\\''");
    CHECK(json_quote_char('"') == "'\"'");
    CHECK(json_quote_char(0x01) == "'\\x01'");
}

namespace {

// What Go writes for one byte sequence inside a string (the tokens the test below uses).
std::string go_escaped(std::string_view token) {
    if (token == "\"")
        return "\\\"";
    if (token == "\\")
        return "\\\\";
    if (token == "\n")
        return "\\n";
    if (token == "<")
        return "\\u003c";
    if (token == ">")
        return "\\u003e";
    if (token == "&")
        return "\\u0026";
    if (token == "\x01")
        return "\\u0001";
    if (token == "\x1f")
        return "\\u001f";
    if (token == "\xFF")
        return "\\ufffd";
    return std::string(token); // plain: ' ', '~', DEL, valid UTF-8
}

} // namespace

TEST_CASE("go marshal: strings escape each special byte at every offset", "[codec][go][json]") {
    // Each special byte at each offset of strings of many lengths, as a value and as a key.
    const std::vector<std::string_view> tokens{"\"",   "\\",   "\n", "<", ">",    "&",       "\x01",
                                               "\x1f", "\xFF", " ",  "~", "\x7f", "\xC3\xA9"};
    for (std::size_t len = 0; len <= 40; ++len) {
        for (std::size_t at = 0; at <= len; ++at) {
            for (const auto token : tokens) {
                const std::string base(len, 'k');
                const std::string s = base.substr(0, at) + std::string(token) + base.substr(at);
                const std::string quoted =
                    '"' + base.substr(0, at) + go_escaped(token) + base.substr(at) + '"';
                INFO("length " << len << " offset " << at << " byte "
                               << int(static_cast<unsigned char>(token[0])));
                CHECK(marshal(json::string(s)) == quoted);
                CHECK(marshal_indent(json::object{{s, nullptr}}, "    ") ==
                      "{\n    " + quoted + ": null\n}");
                CHECK(marshal_indent(json::object{{"S", s}, {"N", len}}, "    ") ==
                      "{\n    \"S\": " + quoted + ",\n    \"N\": " + std::to_string(len) + "\n}");
            }
        }
    }
}
