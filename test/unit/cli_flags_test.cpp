// SPDX-License-Identifier: BSL-1.0
// The conclave executable's pure parts, without a process (compiled in from cli/): Go's flag
// syntax and messages (cli/common/flags), signal names, key paths, and what `conclave lock`'s
// -shared, -exclusive and -n ask it to hold (cli/lock/mode).
#include "cli/common/flags.hpp"
#include "cli/common/key_path.hpp"
#include "cli/common/signal_name.hpp"
#include "cli/lock/mode.hpp"
#include "support/catch.hpp"

#include <csignal>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using namespace conclave::cli;
using namespace std::chrono_literals;
using outcome = flag_set::outcome;

namespace {

// The flags of `conclave lock` that matter here, bound to fields.
struct lock_flags {
    std::int64_t n = 1;
    bool shared = false;
    std::string name;
    std::chrono::nanoseconds timeout{0};
    int signal = 0;
    flag_set flags;

    lock_flags() {
        flags.add_int("n", &n);
        flags.add_bool("shared", &shared);
        flags.add_string("name", &name);
        flags.add_duration("timeout", &timeout);
        flags.add_signal("jeopardy-signal", &signal);
    }

    flag_set::result parse(std::vector<std::string_view> a) { return flags.parse(a); }
};

std::vector<std::string> rest_of(const flag_set::result& r) {
    return {r.rest.begin(), r.rest.end()};
}

} // namespace

TEST_CASE("cli flags: -name=value, -name value and --name are one flag", "[cli]") {
    lock_flags f;
    const auto r = f.parse({"-n=3", "--name", "job", "-timeout", "1m30s", "prefix", "cmd"});
    REQUIRE(r.status == outcome::ok);
    CHECK(f.n == 3);
    CHECK(f.name == "job");
    CHECK(f.timeout == 90s);
    CHECK(rest_of(r) == std::vector<std::string>{"prefix", "cmd"});
    CHECK(f.flags.was_set("n"));
    CHECK(f.flags.was_set("name"));
    CHECK_FALSE(f.flags.was_set("shared"));
}

TEST_CASE("cli flags: a boolean takes its value only after '='", "[cli]") {
    lock_flags f;
    auto r = f.parse({"-shared", "false", "cmd"});
    REQUIRE(r.status == outcome::ok);
    CHECK(f.shared);                                               // -shared alone is true ...
    CHECK(rest_of(r) == std::vector<std::string>{"false", "cmd"}); // ... "false" is an argument
    r = f.parse({"-shared=false", "cmd"});
    REQUIRE(r.status == outcome::ok);
    CHECK_FALSE(f.shared);
    r = f.parse({"-shared=maybe"});
    CHECK(r.status == outcome::error);
    CHECK(r.error == "invalid boolean value \"maybe\" for -shared: parse error");
}

TEST_CASE("cli flags: parsing stops at the first argument, at '-' alone, after '--'", "[cli]") {
    lock_flags f;
    auto r = f.parse({"prefix", "-n", "2"});
    CHECK(rest_of(r) == std::vector<std::string>{"prefix", "-n", "2"});
    CHECK(f.n == 1);
    r = f.parse({"-", "-n", "2"});
    CHECK(rest_of(r) == std::vector<std::string>{"-", "-n", "2"});
    r = f.parse({"-n", "2", "--", "-shared"});
    REQUIRE(r.status == outcome::ok);
    CHECK(f.n == 2);
    CHECK_FALSE(f.shared);
    CHECK(rest_of(r) == std::vector<std::string>{"-shared"}); // "--" consumed
}

TEST_CASE("cli flags: Go's messages for unknown flags, missing values and bad syntax", "[cli]") {
    lock_flags f;
    auto r = f.parse({"-nope"});
    CHECK(r.status == outcome::error);
    CHECK(r.error == "flag provided but not defined: -nope");
    r = f.parse({"-name"});
    CHECK(r.status == outcome::error);
    CHECK(r.error == "flag needs an argument: -name");
    for (std::string_view bad : {"---n", "-=3"}) {
        r = f.parse({bad});
        CHECK(r.status == outcome::error);
        CHECK(r.error == "bad flag syntax: " + std::string(bad));
    }
}

TEST_CASE("cli flags: -h, -help and --help ask for the help text", "[cli]") {
    lock_flags f;
    for (std::string_view help : {"-h", "-help", "--help"})
        CHECK(f.parse({"-n", "2", help, "x"}).status == outcome::help);
}

TEST_CASE("cli flags: integers in Go's bases, with Go's errors", "[cli]") {
    lock_flags f;
    REQUIRE(f.parse({"-n", "0x10"}).status == outcome::ok);
    CHECK(f.n == 16);
    REQUIRE(f.parse({"-n=-1_000"}).status == outcome::ok);
    CHECK(f.n == -1000);
    auto r = f.parse({"-n", "two"});
    CHECK(r.status == outcome::error);
    CHECK(r.error == "invalid value \"two\" for flag -n: parse error");
    r = f.parse({"-n", "99999999999999999999"});
    CHECK(r.error == "invalid value \"99999999999999999999\" for flag -n: value out of range");
    CHECK(f.n == -1000); // (a refused value is not stored)
}

TEST_CASE("cli flags: durations and signals are checked as they are stored", "[cli]") {
    lock_flags f;
    auto r = f.parse({"-timeout", "10"});
    CHECK(r.status == outcome::error);
    CHECK(r.error == "invalid value \"10\" for flag -timeout: parse error"); // (a unit needed)
    REQUIRE(f.parse({"-jeopardy-signal", "usr1"}).status == outcome::ok);
    CHECK(f.signal == SIGUSR1);
    r = f.parse({"-jeopardy-signal=NOPE"});
    CHECK(r.status == outcome::error);
    CHECK(r.error == "invalid value \"NOPE\" for flag -jeopardy-signal: unknown signal (give a "
                     "name such as USR1, or a number)");
}

TEST_CASE("cli signals: names as kill(1) takes them, and numbers", "[cli]") {
    CHECK(parse_signal("USR1") == SIGUSR1);
    CHECK(parse_signal("SIGTERM") == SIGTERM);
    CHECK(parse_signal("sigHup") == SIGHUP);
    CHECK(parse_signal("9") == SIGKILL);
    CHECK(parse_signal(std::to_string(SIGRTMAX)) == SIGRTMAX);
    CHECK_FALSE(parse_signal("0"));
    CHECK_FALSE(parse_signal(std::to_string(SIGRTMAX + 1)));
    CHECK_FALSE(parse_signal("10x"));
    CHECK_FALSE(parse_signal("SIG"));
    CHECK_FALSE(parse_signal(""));
    CHECK(signal_name(SIGUSR2) == "SIGUSR2");
    CHECK(signal_name(SIGRTMIN + 2) == "signal " + std::to_string(SIGRTMIN + 2));
}

TEST_CASE("cli key paths: cleaned as Go's path.Clean, without a leading '/'", "[cli]") {
    CHECK(clean_key_path("service/web/leader") == "service/web/leader");
    CHECK(clean_key_path("a//b/./c/") == "a/b/c");
    CHECK(clean_key_path("a/b/../c") == "a/c");
    CHECK(clean_key_path("/a") == "a");
    CHECK(clean_key_path("../../a") == "a"); // nothing above the root
    CHECK(clean_key_path("a/..").empty());
    CHECK(clean_key_path("./.").empty());
    CHECK(clean_key_path("").empty());
}

TEST_CASE("cli lock mode: plain without -shared or -exclusive, whatever -n", "[cli]") {
    for (std::int64_t n : {1, 2, 7}) {
        const auto c = choose_lock_mode(false, false, n);
        CHECK(c.error.empty());
        CHECK(c.mode == lock_mode::plain);
    }
}

TEST_CASE("cli lock mode: -shared and -exclusive choose the read-write lock's grant", "[cli]") {
    auto c = choose_lock_mode(true, false, 1);
    CHECK(c.error.empty());
    CHECK(c.mode == lock_mode::shared);
    c = choose_lock_mode(false, true, 1);
    CHECK(c.error.empty());
    CHECK(c.mode == lock_mode::exclusive);
}

TEST_CASE("cli lock mode: -shared with -exclusive, or either with -n other than 1, is refused",
          "[cli]") {
    CHECK(choose_lock_mode(true, true, 1).error ==
          "-shared and -exclusive cannot be combined: a holder reads or writes\n");
    CHECK(choose_lock_mode(true, true, 5).error ==
          "-shared and -exclusive cannot be combined: a holder reads or writes\n"); // (first)
    CHECK(choose_lock_mode(true, false, 2).error ==
          "-n=2 cannot be combined with -shared: a read-write lock has no holder limit\n");
    CHECK(choose_lock_mode(false, true, 3).error ==
          "-n=3 cannot be combined with -exclusive: a read-write lock has no holder limit\n");
}
