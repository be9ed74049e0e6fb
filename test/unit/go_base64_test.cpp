// SPDX-License-Identifier: BSL-1.0
// Standard padded base64 (KV values in Consul's JSON), as Go reads and writes it.
#include "codec/go/base64.hpp"
#include "support/catch.hpp"

#include <string>

using conclave::codec::go::base64_decode;
using conclave::codec::go::base64_encode;
using conclave::codec::go::base64_error;
using namespace std::string_literals;

TEST_CASE("go base64: RFC 4648 test vectors", "[codec][go][base64]") {
    const std::pair<std::string, std::string> vectors[] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (const auto& [plain, encoded] : vectors) {
        INFO("plain: \"" << plain << "\"");
        CHECK(base64_encode(plain) == encoded);
        auto decoded = base64_decode(encoded);
        REQUIRE(decoded.has_value());
        CHECK(*decoded == plain);
    }
}

TEST_CASE("go base64: empty input", "[codec][go][base64]") {
    CHECK(base64_encode("").empty());
    auto decoded = base64_decode("");
    REQUIRE(decoded.has_value());
    CHECK(decoded->empty());
}

TEST_CASE("go base64: one, two and three byte tails", "[codec][go][base64]") {
    CHECK(base64_encode("abcd") == "YWJjZA==");
    CHECK(base64_encode("abcde") == "YWJjZGU=");
    CHECK(base64_encode("abcdef") == "YWJjZGVm");
    CHECK(base64_decode("YWJjZA==") == "abcd"s);
    CHECK(base64_decode("YWJjZGU=") == "abcde"s);
    CHECK(base64_decode("YWJjZGVm") == "abcdef"s);
}

TEST_CASE("go base64: binary bytes", "[codec][go][base64]") {
    CHECK(base64_encode("\0"s) == "AA==");
    CHECK(base64_encode("\0\0\0"s) == "AAAA");
    CHECK(base64_encode("\xff"s) == "/w==");
    CHECK(base64_encode("\xff\xff\xff"s) == "////");
    CHECK(base64_encode("\xfb\xef\xbe"s) == "++++");
    CHECK(base64_encode("a\0b"s) == "YQBi");

    CHECK(base64_decode("AA==") == "\0"s);
    CHECK(base64_decode("AAA=") == "\0\0"s);
    CHECK(base64_decode("AAAA") == "\0\0\0"s);
    CHECK(base64_decode("/w==") == "\xff"s);
    CHECK(base64_decode("////") == "\xff\xff\xff"s);
    CHECK(base64_decode("++++") == "\xfb\xef\xbe"s);
    CHECK(base64_decode("YQBi") == "a\0b"s); // an embedded NUL does not truncate

    std::string all;
    for (int i = 0; i < 256; ++i)
        all += static_cast<char>(i);
    for (std::size_t len = 0; len <= all.size(); len += 1 + len / 4) {
        const std::string bytes = all.substr(all.size() - len);
        INFO("length " << len);
        const std::string encoded = base64_encode(bytes);
        CHECK(encoded.size() == 4 * ((len + 2) / 3));
        CHECK(encoded.find('\n') == std::string::npos);
        CHECK(base64_decode(encoded) == bytes);
    }
}

TEST_CASE("go base64: large values encode on one line", "[codec][go][base64]") {
    const std::string big(100000, '\x5a');
    const std::string encoded = base64_encode(big);
    CHECK(encoded.size() == 133336);
    CHECK(encoded.substr(0, 8) == "WlpaWlpa");
    CHECK(encoded.substr(encoded.size() - 8) == "WlpaWg==");
    CHECK(base64_decode(encoded) == big);
}

TEST_CASE("go base64: invalid length is rejected", "[codec][go][base64]") {
    CHECK_FALSE(base64_decode("Z"));
    CHECK_FALSE(base64_decode("Zg"));
    CHECK_FALSE(base64_decode("Zg="));
    CHECK_FALSE(base64_decode("Zm9vY"));
    CHECK_FALSE(base64_decode("Zm9vYg="));
    CHECK_FALSE(base64_decode("Zm9vYg==="));
}

TEST_CASE("go base64: characters outside the standard alphabet are rejected",
          "[codec][go][base64]") {
    CHECK_FALSE(base64_decode("Zm9!"));
    CHECK_FALSE(base64_decode("Zm9-"));         // URL-safe alphabet
    CHECK_FALSE(base64_decode("Zm9_"));         // URL-safe alphabet
    CHECK_FALSE(base64_decode("Zm\x80v"s));     // non-ASCII
    CHECK_FALSE(base64_decode("Zm\0v"s));       // NUL
    CHECK_FALSE(base64_decode("Zm 9"));         // inner space
    CHECK_FALSE(base64_decode("Zm9vYmFy    ")); // trailing whitespace
    CHECK_FALSE(base64_decode("    Zm9vYmFy")); // leading whitespace
}

TEST_CASE("go base64: padding only at the end, at most two", "[codec][go][base64]") {
    CHECK_FALSE(base64_decode("===="));
    CHECK_FALSE(base64_decode("Z==="));
    CHECK_FALSE(base64_decode("Zg=A"));
    CHECK_FALSE(base64_decode("Z=9v"));
    CHECK_FALSE(base64_decode("=m9v"));
    CHECK_FALSE(base64_decode("Zg==Zm9v")); // padding before the last quantum
    CHECK_FALSE(base64_decode("Zm8=Zm9v"));
}

TEST_CASE("go base64: non-zero trailing bits are accepted, as Go's StdEncoding does",
          "[codec][go][base64]") {
    // Consul decodes with Go's non-strict StdEncoding, which ignores the unused bits.
    CHECK(base64_decode("Zh==") == "f"s);
    CHECK(base64_decode("Zm9=") == "fo"s);
}

TEST_CASE("go base64: newlines anywhere are skipped, as Go's decoder skips them",
          "[codec][go][base64]") {
    CHECK(base64_decode("Zm9v\nYmFy") == "foobar"s);
    CHECK(base64_decode("\r\nZm\r9vYg=\n=\n") == "foob"s);
    CHECK(base64_decode("\n") == ""s);
}

TEST_CASE("go base64: the offset of a failure is Go's CorruptInputError", "[codec][go][base64]") {
    // The dev agent reports it as Consul does: "illegal base64 data at input byte N".
    const auto offset = [](std::string_view text) {
        std::size_t at = 12345;
        CHECK_FALSE(base64_decode(text, &at));
        return at;
    };
    CHECK(offset("YQ") == 0);       // a short final quantum: where it starts
    CHECK(offset("YQ=") == 3);      // "x=" without its second '='
    CHECK(offset("YQ=A") == 2);     // ... followed by something else
    CHECK(offset("Y!==") == 1);     // outside the alphabet
    CHECK(offset("Y===") == 1);     // padding after one sextet
    CHECK(offset("YQ==YQ==") == 4); // anything after the padding
    CHECK(offset("YWJj\nY") == 5);
    CHECK(offset("Zm9vYmF\n") == 5); // si - j, with the newline counted in si
    CHECK(base64_error(5) == "illegal base64 data at input byte 5");
}
