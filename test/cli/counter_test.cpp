// SPDX-License-Identifier: BSL-1.0
// `conclave counter <key> get|next|add <n>|set <n>`: the value printed alone on a line, the
// key readable by `kv get`, and the refusals (bad arguments, a key that is not a counter, an
// add that would overflow), each exit 1 with the reason on stderr.
#include "cli/cli_fixture.hpp"

namespace conclave::test::cli {

namespace {

using result = std::pair<int, std::string>;

result counter(const cli_fixture& f, std::vector<std::string> args) {
    return output_of(f, "counter", std::move(args));
}

} // namespace

TEST_CASE("counter: get, next, add and set print the value", "[counter]") {
    cli_fixture f;
    CHECK(counter(f, {"seq/k", "get"}) == result{0, "0\n"}); // a missing key is 0
    CHECK(f.keys().empty());                                 // and a read writes nothing
    CHECK(counter(f, {"seq/k", "next"}) == result{0, "1\n"});
    CHECK(counter(f, {"seq/k", "add", "41"}) == result{0, "42\n"});
    CHECK(counter(f, {"seq/k", "add", "-50"}) == result{0, "-8\n"});
    CHECK(counter(f, {"seq/k", "set", "7"}) == result{0, "7\n"});
    CHECK(counter(f, {"seq/k", "get"}) == result{0, "7\n"});

    auto raw = f.run({"kv", "get", "seq/k"});
    CHECK(raw->wait() == 0);
    CHECK(raw->out() == "7\n"); // decimal text in the key
    // And a number written by `kv put` is a counter.
    CHECK(f.run({"kv", "put", "seq/k", "100"})->wait() == 0);
    CHECK(counter(f, {"seq/k", "add", "+1"}) == result{0, "101\n"});
    CHECK(f.run({"kv", "delete", "seq/k"})->wait() == 0);
}

TEST_CASE("counter: a key that is not a counter and an overflow are refused", "[counter]") {
    cli_fixture f;
    CHECK(f.run({"kv", "put", "words", "twelve"})->wait() == 0);
    auto words = f.run({"counter", "words", "add", "1"});
    CHECK(words->wait() == 1);
    CHECK(words->out().empty());
    CHECK(words->err().find("key words is not a counter: its value \"twelve\"") !=
          std::string::npos);

    CHECK(f.run({"kv", "put", "-flags=3304740253564472344", "held", "5"})->wait() == 0);
    auto lock_key = f.run({"counter", "held", "set", "1"});
    CHECK(lock_key->wait() == 1);
    CHECK(lock_key->err().find("it is a lock's key") != std::string::npos);

    CHECK(f.run({"counter", "big", "set", "9223372036854775807"})->wait() == 0);
    auto over = f.run({"counter", "big", "next"});
    CHECK(over->wait() == 1);
    CHECK(over->err().find("overflows a 64-bit counter") != std::string::npos);
    auto still = f.run({"kv", "get", "big"});
    CHECK(still->wait() == 0);
    CHECK(still->out() == "9223372036854775807\n");

    for (const char* key : {"words", "held", "big"})
        CHECK(f.run({"kv", "delete", key})->wait() == 0);
}

TEST_CASE("counter: bad arguments are refused before Consul is asked", "[counter][args]") {
    cli_fixture f;
    const std::vector<bad_arguments> cases{
        {{"counter"}, "Error! Missing KEY argument\n", true},
        {{"counter", "k"}, "Error! Missing operation: get, next, add <n> or set <n>\n", true},
        {{"counter", "k", "frob"},
         "Error! Unknown operation 'frob': use get, next, add <n> or set <n>\n",
         true},
        {{"counter", "k", "add"}, "Error! Missing the number for add\n", true},
        {{"counter", "k", "set", "1.5"}, "Error! Not a 64-bit decimal integer: '1.5'\n", true},
        {{"counter", "k", "add", "9223372036854775808"},
         "Error! Not a 64-bit decimal integer: '9223372036854775808'\n",
         true},
        {{"counter", "k", "get", "1"}, "Too many arguments (expected 2, got 3)\n", true},
    };
    check_refused(f, cases, "Usage: conclave counter");
    CHECK(f.keys().empty());
}

} // namespace conclave::test::cli
