// SPDX-License-Identifier: BSL-1.0
// Go duration strings: parse_duration (time.ParseDuration), format_duration
// (Duration.String) and format_wait (the Go api client's ?wait= form).
#include "codec/go/duration.hpp"
#include "support/catch.hpp"

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

using conclave::codec::go::format_duration;
using conclave::codec::go::format_wait;
using conclave::codec::go::parse_duration;
using namespace std::chrono_literals;
using std::chrono::nanoseconds;

namespace {

// The parsed value, or a failure naming the error text.
nanoseconds parsed(const std::string& text) {
    auto r = parse_duration(text);
    INFO("input: \"" << text << "\" error: " << r.error);
    REQUIRE(r.value.has_value());
    CHECK(r.error.empty());
    return *r.value;
}

std::string parse_error(const std::string& text) {
    auto r = parse_duration(text);
    INFO("input: \"" << text << "\"");
    CHECK_FALSE(r.value.has_value());
    return r.error;
}

constexpr std::int64_t max_ns = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t min_ns = std::numeric_limits<std::int64_t>::min();

} // namespace

TEST_CASE("go parse_duration: every unit", "[codec][go][duration]") {
    CHECK(parsed("7ns") == 7ns);
    CHECK(parsed("7us") == 7us);
    CHECK(parsed("7\xC2\xB5s") == 7us); // U+00B5 MICRO SIGN
    CHECK(parsed("7\xCE\xBCs") == 7us); // U+03BC GREEK SMALL LETTER MU
    CHECK(parsed("7ms") == 7ms);
    CHECK(parsed("7s") == 7s);
    CHECK(parsed("7m") == 7min);
    CHECK(parsed("7h") == 7h);
}

TEST_CASE("go parse_duration: zero and signs", "[codec][go][duration]") {
    CHECK(parsed("0") == 0ns);
    CHECK(parsed("-0") == 0ns);
    CHECK(parsed("+0") == 0ns);
    CHECK(parsed("0s") == 0ns);
    CHECK(parsed("0h0m0s") == 0ns);
    CHECK(parsed("-5s") == -5s);
    CHECK(parsed("+5s") == 5s);
    CHECK(parsed("-1h30m") == -90min); // the sign applies to the whole string
}

TEST_CASE("go parse_duration: fractions and compound values", "[codec][go][duration]") {
    CHECK(parsed("1.5s") == 1500ms);
    CHECK(parsed(".5s") == 500ms);
    CHECK(parsed("1.s") == 1s);
    CHECK(parsed("-.5s") == -500ms);
    CHECK(parsed("1.5h") == 90min);
    CHECK(parsed("0.1h") == 6min);
    CHECK(parsed("2.25ms") == 2250us);
    CHECK(parsed("1.5\xC2\xB5s") == 1500ns);
    CHECK(parsed("1.123456789s") == 1123456789ns);
    CHECK(parsed("1.0000000001s") == 1s); // below a nanosecond is dropped
    CHECK(parsed("1h30m") == 90min);
    CHECK(parsed("1m30s") == 90s);
    CHECK(parsed("2h45m30.5s") == 2h + 45min + 30s + 500ms);
    CHECK(parsed("1s500ms") == 1500ms);
    CHECK(parsed("1s1s") == 2s); // Go sums repeated units
    CHECK(parsed("15s") == 15s);
    CHECK(parsed("007s") == 7s);
}

TEST_CASE("go parse_duration: the int64 range, like Go", "[codec][go][duration]") {
    CHECK(parsed("9223372036854775807ns") == nanoseconds{max_ns});
    CHECK(parsed("9223372036854775806ns") == nanoseconds{max_ns - 1});
    CHECK(parsed("-9223372036854775808ns") == nanoseconds{min_ns});
    CHECK(parsed("2562047h47m16.854775807s") == nanoseconds{max_ns});
    CHECK(parsed("-2562047h47m16.854775808s") == nanoseconds{min_ns});
    CHECK(parse_error("9223372036854775808ns") ==
          "time: invalid duration \"9223372036854775808ns\"");
    CHECK(parse_error("2562047h47m16.854775808s") ==
          "time: invalid duration \"2562047h47m16.854775808s\"");
    CHECK(parse_error("2562048h") == "time: invalid duration \"2562048h\"");
    CHECK(parse_error("99999999999999999999ns") ==
          "time: invalid duration \"99999999999999999999ns\"");
    // Go reports the overflowing number before looking at its unit.
    CHECK(parse_error("99999999999999999999x") ==
          "time: invalid duration \"99999999999999999999x\"");
}

TEST_CASE("go parse_duration: Go's error texts", "[codec][go][duration]") {
    CHECK(parse_error("abc") == "time: invalid duration \"abc\"");
    CHECK(parse_error("") == "time: invalid duration \"\"");
    CHECK(parse_error("-") == "time: invalid duration \"-\"");
    CHECK(parse_error("+") == "time: invalid duration \"+\"");
    CHECK(parse_error(".s") == "time: invalid duration \".s\"");
    CHECK(parse_error("s") == "time: invalid duration \"s\"");
    CHECK(parse_error("--5s") == "time: invalid duration \"--5s\"");
    CHECK(parse_error(" 5s") == "time: invalid duration \" 5s\"");
    CHECK(parse_error("5") == "time: missing unit in duration \"5\"");
    CHECK(parse_error("00") == "time: missing unit in duration \"00\"");
    CHECK(parse_error("1.5") == "time: missing unit in duration \"1.5\"");
    CHECK(parse_error("1s2") == "time: missing unit in duration \"1s2\"");
    CHECK(parse_error("5x") == "time: unknown unit \"x\" in duration \"5x\"");
    CHECK(parse_error("5sec") == "time: unknown unit \"sec\" in duration \"5sec\"");
    CHECK(parse_error("5S") == "time: unknown unit \"S\" in duration \"5S\"");
    CHECK(parse_error("1h5d") == "time: unknown unit \"d\" in duration \"1h5d\"");
    CHECK(parse_error("5s ") == "time: unknown unit \"s \" in duration \"5s \"");
}

TEST_CASE("go parse_duration: error texts quote like Go's time.quote", "[codec][go][duration]") {
    // Non-ASCII and control bytes appear as \xNN; quotes and backslashes are escaped.
    CHECK(parse_error("5\xC2\xB5") == R"(time: unknown unit "\xc2\xb5" in duration "5\xc2\xb5")");
    CHECK(parse_error("\t5s") == R"(time: invalid duration "\x095s")");
    CHECK(parse_error(R"("5s")") == R"(time: invalid duration "\"5s\"")");
    CHECK(parse_error(R"(5\)") == R"(time: unknown unit "\\" in duration "5\\")");
}

TEST_CASE("go format_duration: Go's Duration.String", "[codec][go][duration]") {
    CHECK(format_duration(0ns) == "0s");
    CHECK(format_duration(1ns) == "1ns");
    CHECK(format_duration(500ns) == "500ns");
    CHECK(format_duration(999ns) == "999ns");
    CHECK(format_duration(1us) == "1\xC2\xB5s");
    CHECK(format_duration(1500ns) == "1.5\xC2\xB5s");
    CHECK(format_duration(1001ns) == "1.001\xC2\xB5s");
    CHECK(format_duration(1ms) == "1ms");
    CHECK(format_duration(500ms) == "500ms");
    CHECK(format_duration(1500us) == "1.5ms");
    CHECK(format_duration(1000001ns) == "1.000001ms");
    CHECK(format_duration(1s) == "1s");
    CHECK(format_duration(1500ms) == "1.5s");
    CHECK(format_duration(1s + 1ns) == "1.000000001s");
    CHECK(format_duration(15s) == "15s");
    CHECK(format_duration(59s) == "59s");
    CHECK(format_duration(1min) == "1m0s");
    CHECK(format_duration(90s) == "1m30s");
    CHECK(format_duration(1h) == "1h0m0s");
    CHECK(format_duration(1h + 1s) == "1h0m1s");
    CHECK(format_duration(90min) == "1h30m0s");
    CHECK(format_duration(24h) == "24h0m0s");
    CHECK(format_duration(3600s + 500ms) == "1h0m0.5s");
    CHECK(format_duration(nanoseconds{max_ns}) == "2562047h47m16.854775807s");
}

TEST_CASE("go format_duration: negative values", "[codec][go][duration]") {
    CHECK(format_duration(-1ns) == "-1ns");
    CHECK(format_duration(-1500ns) == "-1.5\xC2\xB5s");
    CHECK(format_duration(-500ms) == "-500ms");
    CHECK(format_duration(-1500ms) == "-1.5s");
    CHECK(format_duration(-90min) == "-1h30m0s");
    CHECK(format_duration(nanoseconds{min_ns}) == "-2562047h47m16.854775808s");
}

TEST_CASE("go format_duration and parse_duration round trip", "[codec][go][duration]") {
    const nanoseconds values[] = {0ns,
                                  1ns,
                                  999ns,
                                  1us,
                                  1500ns,
                                  123456789ns,
                                  1s,
                                  1500ms,
                                  59s + 999999999ns,
                                  1min,
                                  90min,
                                  24h,
                                  -1500ms,
                                  -24h,
                                  nanoseconds{max_ns},
                                  nanoseconds{min_ns}};
    for (auto d : values) {
        const std::string text = format_duration(d);
        INFO(text);
        CHECK(parsed(text) == d);
    }
}

TEST_CASE("go format_wait: integer milliseconds", "[codec][go][duration]") {
    CHECK(format_wait(15s) == "15000ms");
    CHECK(format_wait(5min) == "300000ms");
    CHECK(format_wait(250ms) == "250ms");
    CHECK(format_wait(1ms) == "1ms");
    CHECK(format_wait(1999us) == "1ms"); // truncated, as Go's dur / time.Millisecond
    CHECK(format_wait(0ns) == "0ms");
    // A positive wait under 1 ms is sent as 1 ms, never 0 (which means Consul's default).
    CHECK(format_wait(1ns) == "1ms");
    CHECK(format_wait(999us) == "1ms");
}
