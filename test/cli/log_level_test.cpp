// SPDX-License-Identifier: BSL-1.0
// -log-level: every Consul command logs what its client does to stderr, through the
// library's logger hook, and refuses a level it does not know.
#include "cli/cli_fixture.hpp"

namespace conclave::test::cli {

TEST_CASE("log level: debug logs each request on stderr, nothing is logged by default", "[log]") {
    cli_fixture f;
    auto quiet = f.run({"kv", "put", "log/k", "v"});
    CHECK(quiet->wait() == 0);
    CHECK(quiet->err().empty());

    auto get = f.run({"kv", "get", "-log-level=debug", "log/k"});
    CHECK(get->wait() == 0);
    CHECK(get->out() == "v\n");
    CHECK(get->err().find("conclave: debug: GET /v1/kv/log/k -> 200 in ") != std::string::npos);

    // A lock run logs its session and its grant at info.
    auto held = f.run({"lock", "-log-level=info", "log/lock", "true"});
    CHECK(held->wait() == 0);
    CHECK(held->err().find("conclave: info: session ") != std::string::npos);
    CHECK(held->err().find("conclave: info: lock log/lock/.lock acquired (taken) after ") !=
          std::string::npos);
    CHECK(held->err().find("debug") == std::string::npos); // below the threshold
    CHECK(f.run({"kv", "delete", "log/k"})->wait() == 0);
}

TEST_CASE("log level: an unknown level is refused", "[log]") {
    cli_fixture f;
    auto bad = f.run({"kv", "get", "-log-level=loud", "log/k"});
    CHECK(bad->wait() == 1);
    CHECK(
        bad->err().find("Invalid -log-level 'loud': use trace, debug, info, warn, error or off") !=
        std::string::npos);
}

} // namespace conclave::test::cli
