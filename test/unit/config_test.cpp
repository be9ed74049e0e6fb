// SPDX-License-Identifier: BSL-1.0
// client_config: CONSUL_HTTP_ADDR parsing, the Consul CLI's environment variables, and
// describe_address().
#include "support/catch.hpp"

#include <conclave/config.hpp>
#include <conclave/error.hpp>

#include <boost/system/system_error.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

using conclave::apply_http_addr;
using conclave::client_config;
using conclave::config_from_env;

namespace {

using env_map = std::map<std::string, std::string, std::less<>>;
using transport = client_config::transport;

client_config from_env(const env_map& env) {
    return config_from_env([&](std::string_view name) -> std::optional<std::string> {
        auto it = env.find(name);
        if (it == env.end())
            return std::nullopt;
        return it->second;
    });
}

// The exception config_from_env throws for `env` (the test fails when it does not throw).
boost::system::system_error env_error(const env_map& env) {
    try {
        from_env(env);
    } catch (const boost::system::system_error& e) {
        return e;
    }
    FAIL("config_from_env did not throw");
    throw std::logic_error("unreachable");
}

void check_names(const boost::system::system_error& e, std::string_view variable) {
    INFO("what(): " << e.what());
    CHECK(e.code() == conclave::errc::invalid_config);
    CHECK(std::string_view(e.what()).find(variable) != std::string_view::npos);
}

// A file in the temporary directory, removed again at scope exit.
class temp_file {
public:
    explicit temp_file(const std::string& content) {
        std::random_device rd;
        path_ = std::filesystem::temp_directory_path() /
                ("conclave-config-test-" + std::to_string(rd()) + std::to_string(rd()));
        std::ofstream out(path_, std::ios::binary);
        out << content;
        REQUIRE(out.good());
    }
    ~temp_file() {
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }
    temp_file(const temp_file&) = delete;
    temp_file& operator=(const temp_file&) = delete;
    std::string path() const { return path_.string(); }

private:
    std::filesystem::path path_;
};

// Applies `address` to a default config and requires success.
client_config addr(std::string_view address, bool tls = false) {
    client_config cfg;
    cfg.tls.enabled = tls;
    const std::string err = apply_http_addr(cfg, address);
    INFO("address: " << address << " error: " << err);
    REQUIRE(err.empty());
    return cfg;
}

// The error of applying `address`; the config must be left as it was.
std::string addr_error(std::string_view address) {
    client_config cfg;
    cfg.host = "before";
    cfg.port = 1234;
    const std::string err = apply_http_addr(cfg, address);
    INFO("address: " << address);
    CHECK_FALSE(err.empty());
    CHECK(cfg.kind == transport::tcp);
    CHECK(cfg.host == "before");
    CHECK(cfg.port == 1234);
    CHECK(cfg.unix_path.empty());
    CHECK_FALSE(cfg.tls.enabled);
    return err;
}

} // namespace

// --- apply_http_addr ---------------------------------------------------------------------

TEST_CASE("apply_http_addr: host and port", "[config]") {
    auto cfg = addr("consul.example:8501");
    CHECK(cfg.kind == transport::tcp);
    CHECK(cfg.host == "consul.example");
    CHECK(cfg.port == 8501);
    CHECK_FALSE(cfg.tls.enabled);

    cfg = addr("10.0.0.7:1");
    CHECK(cfg.host == "10.0.0.7");
    CHECK(cfg.port == 1);

    CHECK(addr("h:65535").port == 65535);
}

TEST_CASE("apply_http_addr: a bare host gets the scheme's default port", "[config]") {
    auto cfg = addr("consul.example");
    CHECK(cfg.host == "consul.example");
    CHECK(cfg.port == 80);
    CHECK_FALSE(cfg.tls.enabled);

    cfg = addr("consul.example", /*tls=*/true);
    CHECK(cfg.port == 443);
    CHECK(cfg.tls.enabled);

    CHECK(addr("https://consul.example").port == 443);
    CHECK(addr("http://consul.example").port == 80);
}

TEST_CASE("apply_http_addr: http and https URLs", "[config]") {
    auto cfg = addr("http://h:1");
    CHECK(cfg.kind == transport::tcp);
    CHECK(cfg.host == "h");
    CHECK(cfg.port == 1);
    CHECK_FALSE(cfg.tls.enabled);

    cfg = addr("https://h:1");
    CHECK(cfg.host == "h");
    CHECK(cfg.port == 1);
    CHECK(cfg.tls.enabled);
}

TEST_CASE("apply_http_addr: http:// does not revert requested TLS, as Go's api client",
          "[config]") {
    auto cfg = addr("http://h:8501", /*tls=*/true);
    CHECK(cfg.tls.enabled);
    CHECK(cfg.port == 8501);
    cfg = addr("http://h", /*tls=*/true);
    CHECK(cfg.tls.enabled);
    CHECK(cfg.port == 443);
}

TEST_CASE("apply_http_addr: unix sockets", "[config]") {
    auto cfg = addr("unix:///tmp/s");
    CHECK(cfg.kind == transport::unix_socket);
    CHECK(cfg.unix_path == "/tmp/s");
    CHECK(cfg.describe_address() == "unix:///tmp/s");

    // A later TCP address switches the transport back.
    REQUIRE(apply_http_addr(cfg, "h:1").empty());
    CHECK(cfg.kind == transport::tcp);
    CHECK(cfg.host == "h");
    CHECK(cfg.port == 1);
}

TEST_CASE("apply_http_addr: IPv6 literals", "[config]") {
    auto cfg = addr("[::1]:8500");
    CHECK(cfg.host == "::1");
    CHECK(cfg.port == 8500);
    CHECK(cfg.describe_address() == "http://[::1]:8500");

    cfg = addr("[::1]");
    CHECK(cfg.host == "::1");
    CHECK(cfg.port == 80);

    cfg = addr("https://[fe80::1]:8501/");
    CHECK(cfg.host == "fe80::1");
    CHECK(cfg.port == 8501);
    CHECK(cfg.tls.enabled);

    cfg = addr("::1"); // a bare IPv6 literal without brackets
    CHECK(cfg.host == "::1");
    CHECK(cfg.port == 80);
}

TEST_CASE("apply_http_addr: a trailing slash is accepted", "[config]") {
    auto cfg = addr("h:1/");
    CHECK(cfg.host == "h");
    CHECK(cfg.port == 1);
    cfg = addr("https://h:2/");
    CHECK(cfg.host == "h");
    CHECK(cfg.port == 2);
    CHECK(cfg.tls.enabled);
}

TEST_CASE("apply_http_addr: errors leave the config unchanged", "[config]") {
    // Empty host.
    CHECK(addr_error("").find("no host") != std::string::npos);
    CHECK(addr_error(":8500").find("no host") != std::string::npos);
    CHECK(addr_error("http://").find("no host") != std::string::npos);
    CHECK(addr_error("https:///").find("no host") != std::string::npos);
    CHECK(addr_error("[]:8500").find("no host") != std::string::npos);
    // Bad ports.
    CHECK(addr_error("h:99999").find("invalid port '99999'") != std::string::npos);
    CHECK(addr_error("h:65536").find("invalid port") != std::string::npos);
    CHECK(addr_error("h:123456").find("invalid port") != std::string::npos);
    CHECK(addr_error("h:abc").find("invalid port 'abc'") != std::string::npos);
    CHECK(addr_error("h:0").find("invalid port '0'") != std::string::npos);
    CHECK(addr_error("h:-1").find("invalid port") != std::string::npos);
    CHECK(addr_error("h:+80").find("invalid port") != std::string::npos);
    CHECK(addr_error("[::1]:x").find("invalid port") != std::string::npos);
    // Schemes and paths.
    CHECK(addr_error("ftp://h").find("unsupported scheme") != std::string::npos);
    CHECK(addr_error("HTTP://h:1").find("unsupported scheme") != std::string::npos);
    CHECK(addr_error("h:1/x").find("must not contain a path") != std::string::npos);
    CHECK(addr_error("http://h:1/v1/kv").find("must not contain a path") != std::string::npos);
    CHECK(addr_error("unix://").find("no path") != std::string::npos);
    // Broken IPv6 literals.
    CHECK_FALSE(addr_error("[::1").empty());
    CHECK_FALSE(addr_error("[::1]8500").empty());
}

TEST_CASE("apply_http_addr: error messages name the address", "[config]") {
    CHECK(addr_error("h:abc").find("'h:abc'") != std::string::npos);
    CHECK(addr_error("ftp://h").find("'ftp://h'") != std::string::npos);
    CHECK(addr_error("h:1/x").find("'h:1/x'") != std::string::npos);
}

// --- describe_address --------------------------------------------------------------------

TEST_CASE("client_config::describe_address", "[config]") {
    client_config cfg;
    CHECK(cfg.describe_address() == "http://127.0.0.1:8500");
    cfg.tls.enabled = true;
    cfg.host = "consul.example";
    cfg.port = 443;
    CHECK(cfg.describe_address() == "https://consul.example:443");
    cfg.host = "2001:db8::1";
    CHECK(cfg.describe_address() == "https://[2001:db8::1]:443");
    cfg.kind = transport::unix_socket;
    cfg.unix_path = "/run/consul.sock";
    CHECK(cfg.describe_address() == "unix:///run/consul.sock");
}

// --- config_from_env ---------------------------------------------------------------------

TEST_CASE("config_from_env: no variables gives the defaults", "[config]") {
    const auto cfg = from_env({});
    const client_config defaults;
    CHECK(cfg.kind == transport::tcp);
    CHECK(cfg.host == "127.0.0.1");
    CHECK(cfg.port == 8500);
    CHECK(cfg.token.empty());
    CHECK_FALSE(cfg.tls.enabled);
    CHECK(cfg.tls.verify);
    CHECK(cfg.tls.ca_file.empty());
    CHECK(cfg.tls.cert_file.empty());
    CHECK(cfg.max_connections == defaults.max_connections);
    CHECK(cfg.request_timeout == defaults.request_timeout);
}

TEST_CASE("config_from_env: reads every documented variable", "[config]") {
    std::set<std::string, std::less<>> asked;
    const auto cfg = config_from_env([&](std::string_view name) -> std::optional<std::string> {
        asked.emplace(name);
        return std::nullopt;
    });
    CHECK(cfg.host == "127.0.0.1");
    for (const char* name :
         {"CONSUL_HTTP_ADDR", "CONSUL_HTTP_TOKEN", "CONSUL_HTTP_TOKEN_FILE", "CONSUL_HTTP_AUTH",
          "CONSUL_NAMESPACE", "CONSUL_PARTITION", "CONSUL_HTTP_SSL", "CONSUL_HTTP_SSL_VERIFY",
          "CONSUL_CACERT", "CONSUL_CAPATH", "CONSUL_CLIENT_CERT", "CONSUL_CLIENT_KEY",
          "CONSUL_TLS_SERVER_NAME"}) {
        INFO(name);
        CHECK(asked.count(name) == 1);
    }
}

TEST_CASE("config_from_env: CONSUL_NAMESPACE, CONSUL_PARTITION and CONSUL_HTTP_AUTH", "[config]") {
    const auto cfg = from_env({{"CONSUL_NAMESPACE", "team-a"},
                               {"CONSUL_PARTITION", "east"},
                               {"CONSUL_HTTP_AUTH", "user:pa:ss"}});
    CHECK(cfg.namespace_name == "team-a");
    CHECK(cfg.partition == "east");
    CHECK(cfg.http_auth == "user:pa:ss");
    const auto unset = from_env({{"CONSUL_NAMESPACE", ""}}); // empty is unset, as in the CLI
    CHECK(unset.namespace_name.empty());
    CHECK(unset.partition.empty());
    CHECK(unset.http_auth.empty());
}

TEST_CASE("config_from_env: CONSUL_HTTP_ADDR", "[config]") {
    auto cfg = from_env({{"CONSUL_HTTP_ADDR", "consul.example:8501"}});
    CHECK(cfg.host == "consul.example");
    CHECK(cfg.port == 8501);
    CHECK_FALSE(cfg.tls.enabled);

    cfg = from_env({{"CONSUL_HTTP_ADDR", "https://consul.example"}});
    CHECK(cfg.port == 443);
    CHECK(cfg.tls.enabled);

    cfg = from_env({{"CONSUL_HTTP_ADDR", "unix:///var/run/consul.sock"}});
    CHECK(cfg.kind == transport::unix_socket);
    CHECK(cfg.unix_path == "/var/run/consul.sock");

    check_names(env_error({{"CONSUL_HTTP_ADDR", "h:99999"}}), "CONSUL_HTTP_ADDR");
    check_names(env_error({{"CONSUL_HTTP_ADDR", "ftp://h"}}), "CONSUL_HTTP_ADDR");
}

TEST_CASE("config_from_env: CONSUL_HTTP_TOKEN", "[config]") {
    CHECK(from_env({{"CONSUL_HTTP_TOKEN", "abc-123"}}).token == "abc-123");
}

TEST_CASE("config_from_env: CONSUL_HTTP_TOKEN_FILE", "[config]") {
    temp_file file("  \n\tfile-token-42 \r\n\n");

    SECTION("the file's token, trimmed") {
        CHECK(from_env({{"CONSUL_HTTP_TOKEN_FILE", file.path()}}).token == "file-token-42");
    }
    SECTION("a non-empty token file wins over CONSUL_HTTP_TOKEN") {
        CHECK(
            from_env({{"CONSUL_HTTP_TOKEN", "env-token"}, {"CONSUL_HTTP_TOKEN_FILE", file.path()}})
                .token == "file-token-42");
    }
    SECTION("a blank token file leaves CONSUL_HTTP_TOKEN") {
        temp_file blank(" \n\n");
        CHECK(
            from_env({{"CONSUL_HTTP_TOKEN", "env-token"}, {"CONSUL_HTTP_TOKEN_FILE", blank.path()}})
                .token == "env-token");
        CHECK(from_env({{"CONSUL_HTTP_TOKEN_FILE", blank.path()}}).token.empty());
    }
    SECTION("an unreadable file throws invalid_config naming the variable") {
        const auto missing =
            (std::filesystem::temp_directory_path() / "conclave-config-test-no-such-dir" / "token")
                .string();
        const auto e = env_error({{"CONSUL_HTTP_TOKEN_FILE", missing}});
        check_names(e, "CONSUL_HTTP_TOKEN_FILE");
        CHECK(std::string_view(e.what()).find(missing) != std::string_view::npos);
    }
}

TEST_CASE("config_from_env: CONSUL_HTTP_SSL accepts Go's ParseBool spellings", "[config]") {
    for (const char* yes : {"1", "t", "T", "TRUE", "true", "True"}) {
        INFO(yes);
        CHECK(from_env({{"CONSUL_HTTP_SSL", yes}}).tls.enabled);
    }
    for (const char* no : {"0", "f", "F", "FALSE", "false", "False"}) {
        INFO(no);
        CHECK_FALSE(from_env({{"CONSUL_HTTP_SSL", no}}).tls.enabled);
    }
    for (const char* bad : {"maybe", "yes", "no", "tRUE", "on", " true", "2"}) {
        INFO(bad);
        const auto e = env_error({{"CONSUL_HTTP_SSL", bad}});
        check_names(e, "CONSUL_HTTP_SSL");
        CHECK(std::string_view(e.what()).find(bad) != std::string_view::npos);
    }
}

TEST_CASE("config_from_env: CONSUL_HTTP_SSL decides a bare host's port", "[config]") {
    auto cfg = from_env({{"CONSUL_HTTP_SSL", "true"}, {"CONSUL_HTTP_ADDR", "consul.example"}});
    CHECK(cfg.tls.enabled);
    CHECK(cfg.host == "consul.example");
    CHECK(cfg.port == 443);
    CHECK(cfg.describe_address() == "https://consul.example:443");

    cfg = from_env({{"CONSUL_HTTP_SSL", "true"}, {"CONSUL_HTTP_ADDR", "consul.example:8501"}});
    CHECK(cfg.tls.enabled);
    CHECK(cfg.port == 8501);

    cfg = from_env({{"CONSUL_HTTP_SSL", "false"}, {"CONSUL_HTTP_ADDR", "consul.example"}});
    CHECK_FALSE(cfg.tls.enabled);
    CHECK(cfg.port == 80);

    // https:// turns TLS on; http:// never turns requested TLS off (Go's api client).
    cfg = from_env({{"CONSUL_HTTP_SSL", "false"}, {"CONSUL_HTTP_ADDR", "https://h"}});
    CHECK(cfg.tls.enabled);
    CHECK(cfg.port == 443);
    cfg = from_env({{"CONSUL_HTTP_SSL", "true"}, {"CONSUL_HTTP_ADDR", "http://h:8501"}});
    CHECK(cfg.tls.enabled);
    CHECK(cfg.port == 8501);
}

TEST_CASE("config_from_env: CONSUL_HTTP_SSL_VERIFY", "[config]") {
    CHECK_FALSE(from_env({{"CONSUL_HTTP_SSL_VERIFY", "false"}}).tls.verify);
    CHECK_FALSE(from_env({{"CONSUL_HTTP_SSL_VERIFY", "0"}}).tls.verify);
    CHECK(from_env({{"CONSUL_HTTP_SSL_VERIFY", "true"}}).tls.verify);
    check_names(env_error({{"CONSUL_HTTP_SSL_VERIFY", "nope"}}), "CONSUL_HTTP_SSL_VERIFY");
}

TEST_CASE("config_from_env: TLS files and server name", "[config]") {
    const auto cfg = from_env({{"CONSUL_HTTP_SSL", "1"},
                               {"CONSUL_CACERT", "/etc/consul/ca.pem"},
                               {"CONSUL_CAPATH", "/etc/consul/cas"},
                               {"CONSUL_CLIENT_CERT", "/etc/consul/client.pem"},
                               {"CONSUL_CLIENT_KEY", "/etc/consul/client-key.pem"},
                               {"CONSUL_TLS_SERVER_NAME", "server.dc1.consul"}});
    CHECK(cfg.tls.enabled);
    CHECK(cfg.tls.verify);
    CHECK(cfg.tls.ca_file == "/etc/consul/ca.pem");
    CHECK(cfg.tls.ca_path == "/etc/consul/cas");
    CHECK(cfg.tls.cert_file == "/etc/consul/client.pem");
    CHECK(cfg.tls.key_file == "/etc/consul/client-key.pem");
    CHECK(cfg.tls.server_name == "server.dc1.consul");
}

TEST_CASE("config_from_env: client certificate and key go together", "[config]") {
    auto e = env_error({{"CONSUL_CLIENT_CERT", "/c.pem"}});
    check_names(e, "CONSUL_CLIENT_CERT");
    check_names(e, "CONSUL_CLIENT_KEY");
    check_names(env_error({{"CONSUL_CLIENT_KEY", "/k.pem"}}), "CONSUL_CLIENT_KEY");
    // An empty certificate variable is unset, so the key alone is still refused.
    check_names(env_error({{"CONSUL_CLIENT_CERT", ""}, {"CONSUL_CLIENT_KEY", "/k.pem"}}),
                "CONSUL_CLIENT_CERT");
}

TEST_CASE("config_from_env: empty variables are treated as unset", "[config]") {
    const auto cfg = from_env({{"CONSUL_HTTP_ADDR", ""},
                               {"CONSUL_HTTP_TOKEN", ""},
                               {"CONSUL_HTTP_TOKEN_FILE", ""},
                               {"CONSUL_HTTP_SSL", ""},
                               {"CONSUL_HTTP_SSL_VERIFY", ""},
                               {"CONSUL_CACERT", ""},
                               {"CONSUL_CAPATH", ""},
                               {"CONSUL_CLIENT_CERT", ""},
                               {"CONSUL_CLIENT_KEY", ""},
                               {"CONSUL_TLS_SERVER_NAME", ""}});
    CHECK(cfg.kind == transport::tcp);
    CHECK(cfg.host == "127.0.0.1");
    CHECK(cfg.port == 8500);
    CHECK(cfg.token.empty());
    CHECK_FALSE(cfg.tls.enabled);
    CHECK(cfg.tls.verify);
    CHECK(cfg.tls.ca_file.empty());
    CHECK(cfg.tls.ca_path.empty());
    CHECK(cfg.tls.cert_file.empty());
    CHECK(cfg.tls.key_file.empty());
    CHECK(cfg.tls.server_name.empty());

    CHECK(from_env({{"CONSUL_HTTP_TOKEN", "t"}, {"CONSUL_HTTP_TOKEN_FILE", ""}}).token == "t");
}
