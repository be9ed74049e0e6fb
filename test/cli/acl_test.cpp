// SPDX-License-Identifier: BSL-1.0
// The commands against a Consul with ACLs on (default deny; a real Consul only): a token
// with the documented policy is enough for lock, lock -n, elect and kv; a missing
// permission ends the command at once, saying which; no output ever shows the token.
#include "cli_fixture.hpp"
#include "support/acl.hpp"

using namespace conclave::test;
using namespace conclave::test::cli;

namespace {

// Runs `conclave <args>` with the token in CONSUL_HTTP_TOKEN; returns status, stdout+stderr.
std::pair<int, std::string> run_with_token(const consul_server& consul, const std::string& token,
                                           std::vector<std::string> args) {
    process p{std::move(args),
              {"CONSUL_HTTP_ADDR=" + consul.http_address(), "CONSUL_HTTP_TOKEN=" + token,
               "SHELL=/bin/sh"}};
    const int code = p.wait(60s);
    return {code, p.out() + p.err()};
}

} // namespace

TEST_CASE("acl: the documented policy is enough, a missing permission is named, the token "
          "never shown",
          "[acl][real-consul]") {
    auto consul = acl_consul();
    if (!consul)
        return;
    const std::string p = "conclave-acl-cli/" + random_uuid() + "/";
    const auto allowed = make_token(*consul, "cli-minimal", minimal_rules(p));
    const auto read_only = make_token(*consul, "cli-read-only",
                                      "key_prefix \"" + p +
                                          "\" { policy = \"read\" }\n"
                                          "session_prefix \"\" { policy = \"write\" }\n");
    const std::string unknown = random_uuid();
    std::vector<std::string> outputs;

    SECTION("allowed") {
        for (const auto& args :
             std::vector<std::vector<std::string>>{{"lock", p + "l", "echo held"},
                                                   {"lock", "-n=2", p + "s", "echo held"},
                                                   {"elect", "-once", p + "e", "echo held"},
                                                   {"kv", "put", p + "k", "v"},
                                                   {"kv", "get", p + "k"},
                                                   {"kv", "delete", p + "k"}}) {
            auto [code, out] = run_with_token(*consul, allowed, args);
            INFO(args.front() << ": " << out);
            CHECK(code == 0);
            outputs.push_back(out);
        }
    }
    SECTION("denied") {
        struct denied_case {
            std::string token;
            std::vector<std::string> args;
            std::string says;
        };
        for (const auto& c : std::vector<denied_case>{
                 {read_only, {"lock", p + "l", "echo held"}, "key write on \"" + p + "l/.lock\""},
                 {read_only, {"lock", "-n=2", p + "s", "echo held"}, "key write on \"" + p + "s/"},
                 {read_only,
                  {"elect", "-once", p + "e", "echo held"},
                  "key write on \"" + p + "e\""},
                 {read_only, {"kv", "put", p + "k", "v"}, "key write on \"" + p + "k\""},
                 {unknown, {"kv", "get", p + "k"}, "does not know the ACL token"},
                 {unknown, {"lock", p + "l", "echo held"}, "does not know the ACL token"}}) {
            auto [code, out] = run_with_token(*consul, c.token, c.args);
            INFO(c.args.front() << ": " << out);
            CHECK(code == 1);
            CHECK(out.find(c.says) != std::string::npos);
            CHECK(out.find("held") == std::string::npos); // the child never ran
            outputs.push_back(out);
        }
    }
    for (const auto& out : outputs) {
        INFO(out);
        CHECK(out.find(allowed) == std::string::npos);
        CHECK(out.find(read_only) == std::string::npos);
        CHECK(out.find(unknown) == std::string::npos);
        CHECK(out.find(acl_master_token) == std::string::npos);
    }
}
