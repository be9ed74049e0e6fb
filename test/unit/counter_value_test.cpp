// SPDX-License-Identifier: BSL-1.0
// The counter's rules without a server: what text is a number, additions that refuse to
// overflow, and which keys are another recipe's.
#include "recipes/counter/counter_value.hpp"
#include "support/catch.hpp"

#include <limits>

using namespace conclave;
using conclave::detail::checked_add;
using conclave::detail::format_counter;
using conclave::detail::judge_counter;
using conclave::detail::parse_counter;

namespace {
constexpr auto int64_max = std::numeric_limits<std::int64_t>::max();
constexpr auto int64_min = std::numeric_limits<std::int64_t>::min();
} // namespace

TEST_CASE("a counter reads decimal text, signed, with blanks around it", "[counter]") {
    CHECK(parse_counter("0") == 0);
    CHECK(parse_counter("42") == 42);
    CHECK(parse_counter("-17") == -17);
    CHECK(parse_counter("+17") == 17);
    CHECK(parse_counter("007") == 7);
    CHECK(parse_counter(" 5\n") == 5); // echo 5 | consul kv put KEY -
    CHECK(parse_counter("\t-3\r\n") == -3);
    CHECK(parse_counter("9223372036854775807") == int64_max);
    CHECK(parse_counter("-9223372036854775808") == int64_min);
}

TEST_CASE("an empty value reads as 0, as a missing key does", "[counter]") {
    CHECK(parse_counter("") == 0);
    const auto missing = judge_counter("k", std::nullopt);
    CHECK(missing.value == 0);
    CHECK(missing.problem.empty());
}

TEST_CASE("text that is not a decimal int64 is not a counter", "[counter]") {
    for (const char* text :
         {"abc", "1.5", "1e3", "0x10", "12abc", "1 2", "-", "+", "+-1", "--1", "+ 1", "   ",
          "9223372036854775808", "-9223372036854775809", "99999999999999999999999"}) {
        INFO(text);
        CHECK_FALSE(parse_counter(text));
    }
}

TEST_CASE("the counter writes plain decimal text that it reads back", "[counter]") {
    for (std::int64_t v :
         {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, int64_max, int64_min}) {
        CHECK(parse_counter(format_counter(v)) == v);
    }
    CHECK(format_counter(-12) == "-12");
}

TEST_CASE("an add that does not fit in int64 is refused, never wrapped", "[counter]") {
    CHECK(checked_add(1, 2) == 3);
    CHECK(checked_add(int64_max - 1, 1) == int64_max);
    CHECK_FALSE(checked_add(int64_max, 1));
    CHECK_FALSE(checked_add(1, int64_max));
    CHECK(checked_add(int64_min + 1, -1) == int64_min);
    CHECK_FALSE(checked_add(int64_min, -1));
    CHECK(checked_add(int64_max, int64_min) == -1);
}

TEST_CASE("a key with another recipe's flags or a session is not a counter", "[counter]") {
    kv_entry e;
    e.key = "jobs/k";
    e.value = "5";
    CHECK(judge_counter(e.key, e).value == 5);

    e.flags = lock_flag_value;
    auto lock = judge_counter(e.key, e);
    CHECK_FALSE(lock.value);
    CHECK(lock.problem == "key jobs/k is not a counter: it is a lock's key (flags "
                          "3304740253564472344)");
    e.flags = semaphore_flag_value;
    CHECK(judge_counter(e.key, e).problem.find("a semaphore's key") != std::string::npos);
    e.flags = conclave::detail::rw_write_flags;
    CHECK(judge_counter(e.key, e).problem.find("a read-write lock's key") != std::string::npos);
    e.flags = 7;
    CHECK(judge_counter(e.key, e).problem ==
          "key jobs/k is not a counter: it has flags 7 (a counter's are 0)");

    e.flags = 0;
    e.session = "1f2e3d4c-0000-0000-0000-000000000000";
    CHECK(judge_counter(e.key, e).problem.find("session 1f2e3d4c-") != std::string::npos);
}

TEST_CASE("a value that is not a number is named with the key in the problem", "[counter]") {
    kv_entry e;
    e.key = "stats/hits";
    e.value = "twelve";
    auto j = judge_counter(e.key, e);
    CHECK_FALSE(j.value);
    CHECK(j.problem ==
          "key stats/hits is not a counter: its value \"twelve\" is not a decimal 64-bit integer");
    e.value = std::string(100, 'x');
    j = judge_counter(e.key, e);
    std::string shown(64, 'x');
    shown.append("...\"");
    CHECK(j.problem.find(shown) != std::string::npos);
    CHECK(j.problem.find(std::string(65, 'x')) == std::string::npos);
}
