// SPDX-License-Identifier: BSL-1.0
// `conclave kv` and `conclave watch` as separate processes against the dev agent.
#include "cli/cli_fixture.hpp"

#include <csignal>

namespace conclave::test::cli {

TEST_CASE("kv: put, get, delete", "[kv]") {
    cli_fixture f;
    auto put = f.run({"kv", "put", "-flags=42", "app/color", "blue"});
    CHECK(put->wait() == 0);
    CHECK(put->out() == "Success! Data written to: app/color\n");

    auto get = f.run({"kv", "get", "app/color"});
    CHECK(get->wait() == 0);
    CHECK(get->out() == "blue\n");

    auto detailed = f.run({"kv", "get", "-detailed", "app/color"});
    CHECK(detailed->wait() == 0);
    CHECK(detailed->out().find("Flags            42\n") != std::string::npos);
    CHECK(detailed->out().find("Session          -\n") != std::string::npos);

    CHECK(f.run({"kv", "put", "app/size", "L"})->wait() == 0);
    auto recurse = f.run({"kv", "get", "-recurse", "app/"});
    CHECK(recurse->wait() == 0);
    CHECK(recurse->out() == "app/color:blue\napp/size:L\n");
    auto keys = f.run({"kv", "get", "-keys", ""});
    CHECK(keys->wait() == 0);
    CHECK(keys->out() == "app/\n");

    // Check-and-set: a stale index does not write.
    auto cas = f.run({"kv", "put", "-cas", "-modify-index=1", "app/color", "red"});
    CHECK(cas->wait() == 1);
    CHECK(cas->err().find("CAS failed") != std::string::npos);

    auto missing = f.run({"kv", "get", "app/nothing"});
    CHECK(missing->wait() == 1);
    CHECK(missing->err() == "Error! No key exists at: app/nothing\n");

    auto del = f.run({"kv", "delete", "app/color"});
    CHECK(del->wait() == 0);
    CHECK(del->out() == "Success! Deleted key: app/color\n");
    auto del_tree = f.run({"kv", "delete", "-recurse", "app/"});
    CHECK(del_tree->wait() == 0);
    CHECK(del_tree->out() == "Success! Deleted keys with prefix: app/\n");

    auto no_key = f.run({"kv", "put"});
    CHECK(no_key->wait() == 1);
    CHECK(no_key->err().rfind("Error! Missing KEY argument", 0) == 0);
}

TEST_CASE("watch: prints the state, then each change", "[watch]") {
    cli_fixture f;
    CHECK(f.run({"kv", "put", "cfg/a", "1"})->wait() == 0);
    auto w = f.run({"watch", "-count=3", "cfg/"});
    auto lines = [&] { return w->out(); };
    REQUIRE(poll_until([&] { return lines().find("+ cfg/a=1\n") != std::string::npos; }, 30s));

    CHECK(f.run({"kv", "put", "cfg/b", "two\nlines"})->wait() == 0);
    REQUIRE(poll_until([&] { return lines().find("+ cfg/b=two\\nlines\n") != std::string::npos; },
                       30s));
    CHECK(f.run({"kv", "delete", "cfg/a"})->wait() == 0);
    const int code = w->wait(30s);
    INFO(w->err());
    CHECK(code == 0);
    CHECK(lines().find("- cfg/a\n") != std::string::npos);
    CHECK(lines().rfind("index ", 0) == 0);

    CHECK(f.run({"kv", "delete", "-recurse", "cfg/"})->wait() == 0);
}

TEST_CASE("watch: a missing key, then SIGTERM ends it with 0", "[watch]") {
    cli_fixture f;
    auto w = f.run({"watch", "solo"});
    REQUIRE(poll_until([&] { return w->out().find("- solo\n") != std::string::npos; }, 30s));
    CHECK(f.run({"kv", "put", "solo", "x"})->wait() == 0);
    REQUIRE(poll_until([&] { return w->out().find("+ solo=x\n") != std::string::npos; }, 30s));
    w->signal(SIGTERM);
    CHECK(w->wait(30s) == 0);
    CHECK(f.run({"kv", "delete", "solo"})->wait() == 0);
}

} // namespace conclave::test::cli
