// SPDX-License-Identifier: BSL-1.0
// Argument errors (the messages and exit status of `consul lock`), help texts, and a
// Consul that cannot be reached.
#include "cli/cli_fixture.hpp"

#include <conclave/version.hpp>

namespace conclave::test::cli {

TEST_CASE("args: bad lock arguments are rejected as consul lock does", "[args]") {
    cli_fixture f;
    const std::vector<bad_arguments> cases{
        {{"lock", "-n=0", "p", "true"}, "Lock holder limit must be positive\n", false},
        {{"lock", "-n=-2", "p", "true"}, "Lock holder limit must be positive\n", false},
        {{"lock", "-try=-10s", "p", "true"}, "Timeout must be positive\n", false},
        {{"lock", "-timeout=-10s", "p", "true"}, "Timeout must be positive\n", false},
        {{"lock", "-monitor-retry=-5", "p", "true"},
         "Number for 'monitor-retry' must be >= 0\n",
         false},
        {{"lock", "p"}, "Key prefix and child command must be specified\n", false},
        {{"lock"}, "Key prefix and child command must be specified\n", false},
        {{"lock", "-try=blah", "p", "true"},
         "invalid value \"blah\" for flag -try: parse error\n",
         true},
        {{"lock", "-n=x", "p", "true"}, "invalid value \"x\" for flag -n: parse error\n", true},
        // strconv.ParseInt(s, 0, 64), as Go's flag package reads an int: the range error
        // at the overflow, before a bad byte after it.
        {{"lock", "-n=99999999999999999999x", "p", "true"},
         "invalid value \"99999999999999999999x\" for flag -n: value out of range\n",
         true},
        {{"lock", "-n=1__0", "p", "true"},
         "invalid value \"1__0\" for flag -n: parse error\n",
         true},
        {{"lock", "-bogus", "p", "true"}, "flag provided but not defined: -bogus\n", true},
        {{"lock", "-n"}, "flag needs an argument: -n\n", true},
        {{"lock", "-shell=maybe", "p", "true"},
         "invalid boolean value \"maybe\" for -shell: parse error\n",
         true},
        {{"lock", "---n=1", "p", "true"}, "bad flag syntax: ---n=1\n", true},
        {{"lock", "-lock-delay=-1s", "p", "true"}, "Lock delay must not be negative\n", false},
        {{"lock", "-n=4294967296", "p", "true"},
         "-n and -monitor-retry must be below 4294967296\n",
         false},
        {{"lock", "-monitor-retry=4294967296", "p", "true"},
         "-n and -monitor-retry must be below 4294967296\n",
         false},
        {{"lock", "/", "true"},
         "Key prefix '/' names no key: give a path such as service/web/leader\n",
         false},
        // docs/cli.md's order: each check reports alone, the first one that fails.
        {{"lock", "-monitor-retry=-5", "-timeout=-1s", "p"},
         "Key prefix and child command must be specified\n",
         false},
        {{"lock", "-n=4294967296", "-monitor-retry=-5", "-timeout=-1s", "p", "true"},
         "Timeout must be positive\n",
         false},
        {{"lock", "-n=4294967296", "-monitor-retry=-5", "p", "true"},
         "Number for 'monitor-retry' must be >= 0\n",
         false},
        {{"lock", "-n=4294967296", "-ttl=5s", "-lock-delay=-1s", "/", "true"},
         "-n and -monitor-retry must be below 4294967296\n",
         false},
        {{"lock", "-ttl=5s", "-lock-delay=-1s", "/", "true"},
         "Session TTL must be between 10s and 24h, not 5s\n",
         false},
        {{"lock", "-lock-delay=-1s", "/", "true"}, "Lock delay must not be negative\n", false},
        {{"lock", "-lock-delay=soon", "p", "true"},
         "invalid value \"soon\" for flag -lock-delay: parse error\n",
         true},
    };
    check_refused(f, cases, "Usage: conclave lock");
    CHECK(f.sessions().empty()); // argument errors never reach Consul
}

TEST_CASE("args: every command has -help", "[args]") {
    cli_fixture f;
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"-help"}, "Usage: conclave <command>"},
        {{"lock", "-help"}, "Usage: conclave lock"},
        {{"lock", "--help"}, "Usage: conclave lock"},
        {{"lock", "-h"}, "Usage: conclave lock"},
        {{"kv", "-help"}, "Usage: conclave kv"},
        {{"kv", "get", "-help"}, "Usage: conclave kv"},
        {{"kv", "put", "--help"}, "Usage: conclave kv"},
        {{"kv", "delete", "-h"}, "Usage: conclave kv"},
        {{"watch", "-help"}, "Usage: conclave watch"},
        {{"counter", "-help"}, "Usage: conclave counter"},
        {{"agent", "-help"}, "Usage: conclave agent"},
    };
    for (const auto& [args, usage] : cases) {
        auto p = f.run(args);
        const int code = p->wait(30s);
        INFO(args.front() << " " << args.back());
        CHECK(code == 0);
        CHECK(p->out().find(usage) != std::string::npos);
    }
    for (const char* version : {"version", "-version", "--version"}) {
        auto p = f.run({version});
        CHECK(p->wait(30s) == 0);
        CHECK(p->out() == "conclave v" CONCLAVE_VERSION_STRING "\n");
    }
    auto unknown = f.run({"frobnicate"});
    CHECK(unknown->wait(30s) == 1);
    CHECK(unknown->err().find("unknown command 'frobnicate'") != std::string::npos);
    auto kv_unknown = f.run({"kv", "list"});
    CHECK(kv_unknown->wait(30s) == 1);
    CHECK(kv_unknown->err().find("use get, put, delete, export or import") != std::string::npos);
}

TEST_CASE("args: an unreachable agent is an error that names the address", "[args]") {
    cli_fixture f;
    // -http-addr overrides CONSUL_HTTP_ADDR (which names the working agent).
    for (std::vector<std::string> args :
         {std::vector<std::string>{"lock", "-http-addr=127.0.0.1:1", "p", "true"},
          std::vector<std::string>{"watch", "-http-addr=127.0.0.1:1", "k"}}) {
        auto p = f.run(args);
        const int code = p->wait(60s);
        const auto err = p->err();
        INFO(err);
        CHECK(code == 1);
        CHECK(err.find("Error querying Consul agent at http://127.0.0.1:1") != std::string::npos);
        CHECK(err.find("CONSUL_HTTP_ADDR") != std::string::npos);
    }
    auto bad_addr = f.run({"kv", "get", "-http-addr=http://", "k"});
    CHECK(bad_addr->wait(30s) == 1);
    CHECK(bad_addr->err().find("Invalid -http-addr") != std::string::npos);
}

} // namespace conclave::test::cli
