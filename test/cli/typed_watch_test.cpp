// SPDX-License-Identifier: BSL-1.0
// `conclave watch -type=key|keyprefix`, `consul watch`'s interface: a handler run once per
// state with Consul's JSON on stdin and CONSUL_INDEX in its environment, or the state
// printed once without one.
#include "cli/cli_fixture.hpp"

#include <csignal>

namespace conclave::test::cli {

namespace {

// Go's api.KVPair, compact (the handler's stdin), with a value already in base64 ("" for
// null).
std::string pair_json(const kv_entry& e, const std::string& value64) {
    return "{\"Key\":\"" + e.key + "\",\"CreateIndex\":" + std::to_string(e.create_index) +
           ",\"ModifyIndex\":" + std::to_string(e.modify_index) +
           ",\"LockIndex\":0,\"Flags\":" + std::to_string(e.flags) +
           ",\"Value\":" + (value64.empty() ? std::string("null") : "\"" + value64 + "\"") +
           ",\"Session\":\"\"}";
}

kv_entry entry(cli_fixture& f, const std::string& key) {
    for (auto& e : f.keys())
        if (e.key == key)
            return e;
    FAIL("no key " << key);
    return {};
}

// A handler that appends its stdin to `stdin` and its CONSUL_INDEX to `index`.
std::string recording_handler(const cli_fixture& f) {
    return "cat >> " + f.path("stdin") + "; echo $CONSUL_INDEX >> " + f.path("index");
}

bool runs_done(const cli_fixture& f, std::size_t n) {
    return poll_until([&] { return read_lines(f.path("index")).size() >= n; }, 30s);
}

} // namespace

TEST_CASE("watch -type=key: the handler gets each state of the key as Consul's JSON on stdin",
          "[watch][typed]") {
    cli_fixture f;
    CHECK(f.run({"kv", "put", "cfg/k", "v1"})->wait() == 0);
    auto w = f.run({"watch", "-type=key", "-key=cfg/k", "-count=3", recording_handler(f)});
    REQUIRE(runs_done(f, 1));
    const auto first = entry(f, "cfg/k");
    std::string expected = pair_json(first, "djE=") + "\n";
    CHECK(read_file(f.path("stdin")) == expected);
    CHECK(std::stoull(read_lines(f.path("index")).at(0)) >= first.modify_index);

    CHECK(f.run({"kv", "put", "-flags=7", "cfg/k", "v2"})->wait() == 0);
    REQUIRE(runs_done(f, 2));
    const auto second = entry(f, "cfg/k");
    expected += pair_json(second, "djI=") + "\n";
    CHECK(read_file(f.path("stdin")) == expected);

    CHECK(f.run({"kv", "delete", "cfg/k"})->wait() == 0); // the key, gone: null
    const int code = w->wait(30s);
    INFO(w->err());
    CHECK(code == 0); // -count=3 runs
    CHECK(read_file(f.path("stdin")) == expected + "null\n");
    const auto indexes = read_lines(f.path("index"));
    REQUIRE(indexes.size() == 3);
    CHECK(std::stoull(indexes[1]) > std::stoull(indexes[0]));
    CHECK(std::stoull(indexes[2]) > std::stoull(indexes[1]));
    CHECK(w->out().empty());
}

TEST_CASE("watch -type=keyprefix: the handler gets an array of the keys under the prefix",
          "[watch][typed]") {
    cli_fixture f;
    CHECK(f.run({"kv", "put", "p/a", "1"})->wait() == 0);
    auto w = f.run({"watch", "-type=keyprefix", "-prefix=p/", "-count=2", recording_handler(f)});
    REQUIRE(runs_done(f, 1));
    const auto a = entry(f, "p/a");
    std::string expected = "[" + pair_json(a, "MQ==") + "]\n";
    CHECK(read_file(f.path("stdin")) == expected);

    // Go escapes <, > and & in its JSON; an empty value is null.
    CHECK(f.run({"kv", "put", "p/b<&>", ""})->wait() == 0);
    const int code = w->wait(30s);
    INFO(w->err());
    CHECK(code == 0);
    auto b = entry(f, "p/b<&>");
    b.key = "p/b\\u003c\\u0026\\u003e";
    expected += "[" + pair_json(a, "MQ==") + "," + pair_json(b, "") + "]\n";
    CHECK(read_file(f.path("stdin")) == expected);
    CHECK(f.run({"kv", "delete", "-recurse", "p/"})->wait() == 0);
}

TEST_CASE("watch -type without a handler prints the state indented, as consul watch, and exits",
          "[watch][typed]") {
    cli_fixture f;
    CHECK(f.run({"kv", "put", "-flags=3", "p/a", "hello"})->wait() == 0);
    const auto a = entry(f, "p/a");
    const std::string object = "{\n"
                               "        \"Key\": \"p/a\",\n"
                               "        \"CreateIndex\": " +
                               std::to_string(a.create_index) +
                               ",\n"
                               "        \"ModifyIndex\": " +
                               std::to_string(a.modify_index) +
                               ",\n"
                               "        \"LockIndex\": 0,\n"
                               "        \"Flags\": 3,\n"
                               "        \"Value\": \"aGVsbG8=\",\n"
                               "        \"Session\": \"\"\n"
                               "    }";
    auto prefix = f.run({"watch", "-type=keyprefix", "-prefix=p"});
    CHECK(prefix->wait() == 0);
    CHECK(prefix->out() == "[\n    " + object + "\n]\n");

    auto missing = f.run({"watch", "-type=key", "-key=p/none"});
    CHECK(missing->wait() == 0);
    CHECK(missing->out() == "null\n");
    auto empty = f.run({"watch", "-type=keyprefix", "-prefix=q/"});
    CHECK(empty->wait() == 0);
    CHECK(empty->out() == "null\n");
    CHECK(f.run({"kv", "delete", "p/a"})->wait() == 0);
}

TEST_CASE("watch -type: a failing handler ends the watch with 1, SIGTERM reaches a running one",
          "[watch][typed]") {
    cli_fixture f;
    auto failing = f.run({"watch", "-type=key", "-key=k", "exit 3"});
    CHECK(failing->wait() == 1);
    CHECK(failing->err() == "Error executing handler: exit status 3\n");
    auto missing = f.run({"watch", "-type=key", "-key=k", "-shell=false", "/nonexistent/prog"});
    CHECK(missing->wait() == 1);
    CHECK(missing->err() ==
          "Error executing handler: No such file or directory (/nonexistent/prog)\n");

    const auto started = f.path("started");
    const auto stopped = f.path("stopped");
    auto w = f.run({"watch", "-type=key", "-key=k",
                    "trap 'echo term > " + stopped + "; exit 0' TERM; echo started > " + started +
                        "; while :; do sleep 0.05; done"});
    REQUIRE(poll_until([&] { return read_lines(started).size() == 1; }, 30s));
    w->signal(SIGTERM);
    const int code = w->wait(30s);
    INFO(w->err());
    CHECK(code == 0);
    CHECK(read_lines(stopped) == std::vector<std::string>{"term"});
}

TEST_CASE("watch: -type, -key and -prefix are checked as consul watch checks them",
          "[watch][typed][args]") {
    cli_fixture f;
    const std::vector<bad_arguments> cases{
        {{"watch", "-type=service", "-key=k"}, "Unsupported watch type: service\n", false},
        {{"watch", "-type=key"}, "Must specify a single key to watch\n", false},
        {{"watch", "-type=keyprefix"}, "Must specify a single prefix to watch\n", false},
        {{"watch", "-type=key", "-key=k", "-prefix=p"}, "Invalid parameters: [prefix]\n", false},
        {{"watch", "-type=keyprefix", "-prefix=p", "-key=k"}, "Invalid parameters: [key]\n", false},
        {{"watch", "-key=k"}, "-key and -shell need -type", true},
        {{"watch", "-prefix=cfg/", "cfg/"}, "-prefix names the prefix to watch", true},
    };
    check_refused(f, cases, "Usage: conclave watch");
}

TEST_CASE("watch: -prefix <prefix> without -type still watches the prefix", "[watch]") {
    cli_fixture f;
    CHECK(f.run({"kv", "put", "cfg/a", "1"})->wait() == 0);
    auto w = f.run({"watch", "-count=1", "-prefix", "cfg"});
    CHECK(w->wait(30s) == 0);
    CHECK(w->out().find("+ cfg/a=1\n") != std::string::npos);
    CHECK(f.run({"kv", "delete", "cfg/a"})->wait() == 0);
}

} // namespace conclave::test::cli
