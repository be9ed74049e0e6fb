// SPDX-License-Identifier: BSL-1.0
// Go's strconv as codec/go/ reproduces it: ParseUint, ParseInt and ParseBool with NumError's
// texts (the dev agent's answers, the CLI's flags), and Quote (Go's error texts).
#include "codec/go/quote.hpp"
#include "codec/go/strconv.hpp"
#include "support/catch.hpp"

#include <cstdint>
#include <string>

using namespace conclave::codec::go;

TEST_CASE("go parse_uint: base 10 and NumError's texts", "[codec][go][strconv]") {
    CHECK(*parse_uint("18446744073709551615").value == 18446744073709551615ULL);
    CHECK(*parse_uint("0").value == 0);
    CHECK(*parse_uint("007").value == 7);
    CHECK(parse_uint("18446744073709551616").error ==
          "strconv.ParseUint: parsing \"18446744073709551616\": value out of range");
    CHECK(parse_uint("abc").error == "strconv.ParseUint: parsing \"abc\": invalid syntax");
    CHECK(parse_uint("-1").error == "strconv.ParseUint: parsing \"-1\": invalid syntax");
    CHECK(parse_uint("+1").error == "strconv.ParseUint: parsing \"+1\": invalid syntax");
    CHECK(parse_uint("").error == "strconv.ParseUint: parsing \"\": invalid syntax");
    CHECK(parse_uint("1_000").failure == num_error::syntax); // underscores: base 0 only
    CHECK(parse_uint("256", 10, 8).error ==
          "strconv.ParseUint: parsing \"256\": value out of range");
    CHECK(*parse_uint("255", 10, 8).value == 255);
    CHECK(*parse_uint("4294967295", 10, 32).value == 4294967295ULL);
    CHECK(parse_uint("4294967296", 10, 32).failure == num_error::range);
    // Go stops at the overflow: a bad byte after it is not reached.
    CHECK(parse_uint("99999999999999999999x").failure == num_error::range);
    CHECK(parse_uint("x99999999999999999999").failure == num_error::syntax);
    // The text is quoted as strconv.Quote quotes it.
    CHECK(parse_uint("a\"\xFF").error ==
          "strconv.ParseUint: parsing \"a\\\"\\xff\": invalid syntax");
}

TEST_CASE("go parse_uint: base 0, prefixes and underscores", "[codec][go][strconv]") {
    CHECK(*parse_uint("0x1F", 0).value == 31);
    CHECK(*parse_uint("0X1f", 0).value == 31);
    CHECK(*parse_uint("0o17", 0).value == 15);
    CHECK(*parse_uint("0b101", 0).value == 5);
    CHECK(*parse_uint("017", 0).value == 15);
    CHECK(*parse_uint("0", 0).value == 0);
    CHECK(*parse_uint("1_000", 0).value == 1000);
    CHECK(*parse_uint("0x_1F", 0).value == 31);
    CHECK(*parse_uint("0_17", 0).value == 15);
    CHECK(*parse_uint("18446744073709551615", 0).value == 18446744073709551615ULL);
    CHECK(*parse_uint("0xFFFFFFFFFFFFFFFF", 0).value == 18446744073709551615ULL);
    CHECK(parse_uint("0x10000000000000000", 0).failure == num_error::range);
    CHECK(parse_uint("0x", 0).failure == num_error::syntax);
    CHECK(parse_uint("0b", 0).failure == num_error::syntax);
    CHECK(parse_uint("08", 0).failure == num_error::syntax);
    CHECK(parse_uint("0b2", 0).failure == num_error::syntax);
    CHECK(parse_uint("1__0", 0).failure == num_error::syntax);
    CHECK(parse_uint("_1", 0).failure == num_error::syntax);
    CHECK(parse_uint("1_", 0).failure == num_error::syntax);
    CHECK(parse_uint("0xg", 0).error == "strconv.ParseUint: parsing \"0xg\": invalid syntax");
    CHECK(*parse_uint("ff", 16).value == 255);
    CHECK(*parse_uint("z", 36).value == 35);
}

TEST_CASE("go parse_int: signs, range and NumError's texts", "[codec][go][strconv]") {
    CHECK(*parse_int("-9223372036854775808").value == INT64_MIN);
    CHECK(*parse_int("9223372036854775807").value == INT64_MAX);
    CHECK(*parse_int("+5").value == 5);
    CHECK(*parse_int("-0x10", 0).value == -16);
    CHECK(*parse_int("-1_0", 0).value == -10);
    CHECK(parse_int("9223372036854775808").error ==
          "strconv.ParseInt: parsing \"9223372036854775808\": value out of range");
    CHECK(parse_int("-9223372036854775809").failure == num_error::range);
    CHECK(parse_int("-99999999999999999999").failure == num_error::range);
    CHECK(parse_int("-x").error == "strconv.ParseInt: parsing \"-x\": invalid syntax");
    CHECK(parse_int("").error == "strconv.ParseInt: parsing \"\": invalid syntax");
    CHECK(parse_int("-").failure == num_error::syntax);
    CHECK(parse_int("+-1").failure == num_error::syntax);
    CHECK(*parse_int("-128", 10, 8).value == -128);
    CHECK(parse_int("128", 10, 8).failure == num_error::range);
    CHECK(parse_int("-129", 10, 8).failure == num_error::range);
}

TEST_CASE("go parse_bool: the words strconv.ParseBool takes", "[codec][go][strconv]") {
    for (const char* word : {"1", "t", "T", "TRUE", "true", "True"})
        CHECK(parse_bool(word) == true);
    for (const char* word : {"0", "f", "F", "FALSE", "false", "False"})
        CHECK(parse_bool(word) == false);
    for (const char* word : {"", "yes", "tRUE", "2", " true", "on"})
        CHECK_FALSE(parse_bool(word));
}

TEST_CASE("go quote: strconv.Quote", "[codec][go][strconv]") {
    CHECK(quote("a\"b\\c\n\x01\xFF") == "\"a\\\"b\\\\c\\n\\x01\\xff\"");
    CHECK(quote("") == "\"\"");
    CHECK(quote("\a\b\f\r\t\v") == "\"\\a\\b\\f\\r\\t\\v\"");
    // DEL as \x7f, U+00AD as \u00ad: Consul 1.8's "unknown KV verb" texts for those verbs.
    CHECK(quote("\x7f") == "\"\\x7f\"");
    CHECK(quote("\xC2\xAD") == "\"\\u00ad\"");
    CHECK(quote("caf\xC3\xA9") == "\"caf\xC3\xA9\"");      // printable: as it is
    CHECK(quote("\xE2\x80\xA8") == "\"\\u2028\"");         // a separator
    CHECK(quote("\xF4\x8F\xBF\xBF") == "\"\\U0010ffff\""); // not printable, above U+FFFF
    CHECK(quote("\xED\xA0\x80") == "\"\\xed\\xa0\\x80\""); // a surrogate: invalid UTF-8
}
