// SPDX-License-Identifier: BSL-1.0
// The client over TLS against a scripted TLS server with a throwaway PKI: server
// verification (CA file, CA directory, host name, SNI), verify = false, mutual TLS,
// keep-alive and stale connections, handshake timeouts, unusable TLS files, and the
// CONSUL_* environment path end to end.
#include "http/connection.hpp"
#include "scripted_server.hpp"
#include "support/catch.hpp"
#include "support/run.hpp"
#include "test_certs.hpp"

#include <conclave/client.hpp>

#include <fstream>
#include <map>
#include <openssl/err.h>
#include <openssl/ssl.h>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

constexpr auto tuple_token = asio::as_tuple(asio::use_awaitable);

scripted_reply ok_entry(const received_request&) {
    return {http_response(
        200,
        R"([{"LockIndex":0,"Key":"k","Flags":0,"Value":"dg==","CreateIndex":5,"ModifyIndex":6}])",
        {{"Content-Type", "application/json"}, {"X-Consul-Index", "42"}})};
}

/// The server side: the localhost certificate; with `require_client_cert`, clients must
/// present a certificate signed by the test CA.
asio::ssl::context server_context(const test_pki& pki, bool require_client_cert = false) {
    asio::ssl::context ctx{asio::ssl::context::tls_server};
    ctx.use_certificate_chain_file(pki.server_cert);
    ctx.use_private_key_file(pki.server_key, asio::ssl::context::pem);
    if (require_client_cert) {
        ctx.load_verify_file(pki.ca_cert);
        ctx.set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
    }
    return ctx;
}

/// https to 127.0.0.1:<port>, trusting `ca_file`, expecting the name "localhost".
client_config tls_config_for(const scripted_server& s, const std::string& ca_file) {
    client_config cfg;
    cfg.port = s.port();
    cfg.request_timeout = 5s;
    cfg.tls.enabled = true;
    cfg.tls.ca_file = ca_file;
    cfg.tls.server_name = "localhost";
    return cfg;
}

bool is_ssl_error(const error_code& ec) {
    return ec.category() == asio::error::get_ssl_category();
}

/// The OpenSSL reason of an SSL-category error (0 for any other category).
int ssl_reason(const error_code& ec) {
    return is_ssl_error(ec) ? ERR_GET_REASON(static_cast<unsigned long>(ec.value())) : 0;
}

} // namespace

TEST_CASE("a KV GET over TLS verifies the server against ca_file and sends SNI", "[tls]") {
    test_pki pki;
    asio::io_context ioc;
    auto server_tls = server_context(pki);
    scripted_server server{ioc, server_tls, ok_entry};
    client c{ioc.get_executor(), tls_config_for(server, pki.ca_cert)};
    auto [ec, r] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    REQUIRE_FALSE(ec);
    REQUIRE(r.entry);
    CHECK(r.entry->value == "v");
    CHECK(r.meta.index == 42);
    CHECK(server.handshakes() == 1);
    REQUIRE(server.requests().size() == 1);
    CHECK(server.requests()[0].message.target() == "/v1/kv/k");
    CHECK(server.requests()[0].server_name == "localhost");
    CHECK(server.requests()[0].client_subject.empty());
    CHECK(c.config().describe_address() == "https://127.0.0.1:" + std::to_string(server.port()));
}

TEST_CASE("an IP literal host is verified against the IP SAN and sends no SNI", "[tls]") {
    test_pki pki;
    asio::io_context ioc;
    auto server_tls = server_context(pki);
    scripted_server server{ioc, server_tls, ok_entry};
    auto cfg = tls_config_for(server, pki.ca_cert);
    cfg.tls.server_name.clear(); // verify 127.0.0.1 itself
    client c{ioc.get_executor(), cfg};
    auto [ec, r] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    REQUIRE_FALSE(ec);
    CHECK(r.entry);
    REQUIRE(server.requests().size() == 1);
    // RFC 6066 section 3: literal IP addresses are not permitted in SNI.
    CHECK(server.requests()[0].server_name.empty());
}

TEST_CASE("ca_path with a hashed CA directory verifies the server", "[tls]") {
    test_pki pki;
    asio::io_context ioc;
    auto server_tls = server_context(pki);
    scripted_server server{ioc, server_tls, ok_entry};
    auto cfg = tls_config_for(server, "");
    cfg.tls.ca_path = pki.ca_dir;
    client c{ioc.get_executor(), cfg};
    auto [ec, r] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    REQUIRE_FALSE(ec);
    CHECK(r.entry);
    CHECK(server.requests().size() == 1);
}

TEST_CASE("a server certificate from an untrusted CA fails the handshake for good", "[tls]") {
    test_pki pki;
    asio::io_context ioc;
    auto server_tls = server_context(pki);
    scripted_server server{ioc, server_tls, ok_entry};
    client c{ioc.get_executor(), tls_config_for(server, pki.other_ca_cert)};
    diagnostics diag;
    auto [ec, r] = run(ioc, c.async_kv_get("k", query_options{}.with_diag(&diag), tuple_token));
    REQUIRE(ec);
    INFO(ec.message());
    CHECK(is_ssl_error(ec));
    CHECK(ssl_reason(ec) == SSL_R_CERTIFICATE_VERIFY_FAILED);
    CHECK_FALSE(is_retryable(ec));
    CHECK_FALSE(r.entry.has_value());
    CHECK(diag.client_message.find("https://127.0.0.1:" + std::to_string(server.port())) !=
          std::string::npos);
    CHECK(server.connections() == 1); // the client did connect, then refused the server
    CHECK(server.handshakes() == 0);
    CHECK(server.requests().empty());
    CHECK(c.stats().connects == 0);
    CHECK(c.stats().retries == 0);
}

TEST_CASE("verify = false accepts a server from an untrusted CA", "[tls]") {
    test_pki pki;
    asio::io_context ioc;
    auto server_tls = server_context(pki);
    scripted_server server{ioc, server_tls, ok_entry};
    auto cfg = tls_config_for(server, pki.other_ca_cert);
    cfg.tls.verify = false;
    cfg.tls.server_name = "other.example"; // no host name check either
    client c{ioc.get_executor(), cfg};
    auto [ec, r] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    REQUIRE_FALSE(ec);
    CHECK(r.entry);
    REQUIRE(server.requests().size() == 1);
    CHECK(server.requests()[0].server_name == "other.example");
}

TEST_CASE("a server name the certificate does not cover fails verification", "[tls]") {
    test_pki pki;
    asio::io_context ioc;
    auto server_tls = server_context(pki);
    scripted_server server{ioc, server_tls, ok_entry};
    auto cfg = tls_config_for(server, pki.ca_cert);
    cfg.tls.server_name = "other.example";
    client c{ioc.get_executor(), cfg};
    auto [ec, r] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    REQUIRE(ec);
    INFO(ec.message());
    CHECK(is_ssl_error(ec));
    CHECK(ssl_reason(ec) == SSL_R_CERTIFICATE_VERIFY_FAILED);
    CHECK_FALSE(is_retryable(ec));
    CHECK(server.handshakes() == 0);
    CHECK(server.requests().empty());
}

TEST_CASE("mutual TLS: the client certificate is presented when configured", "[tls]") {
    test_pki pki;
    asio::io_context ioc;
    auto server_tls = server_context(pki, true);
    scripted_server server{ioc, server_tls, ok_entry};

    SECTION("with cert_file and key_file the request succeeds") {
        auto cfg = tls_config_for(server, pki.ca_cert);
        cfg.tls.cert_file = pki.client_cert;
        cfg.tls.key_file = pki.client_key;
        client c{ioc.get_executor(), cfg};
        auto [ec, r] = run(ioc, c.async_kv_get("k", {}, tuple_token));
        REQUIRE_FALSE(ec);
        CHECK(r.entry);
        REQUIRE(server.requests().size() == 1);
        CHECK(server.requests()[0].client_subject == "conclave-test-client");
    }
    SECTION("without them the server refuses the connection") {
        client c{ioc.get_executor(), tls_config_for(server, pki.ca_cert)};
        auto [ec, r] = run(ioc, c.async_kv_get("k", {}, tuple_token));
        CHECK(ec);
        INFO(ec.message());
        CHECK_FALSE(r.entry.has_value());
        run_until(ioc, [&] { return server.handshake_failures() == 1; });
        CHECK(server.handshakes() == 0);
        CHECK(server.requests().empty());
    }
}

TEST_CASE("keep-alive over TLS: two GETs share one connection and one handshake", "[tls]") {
    test_pki pki;
    asio::io_context ioc;
    auto server_tls = server_context(pki);
    scripted_server server{ioc, server_tls, ok_entry};
    client c{ioc.get_executor(), tls_config_for(server, pki.ca_cert)};
    auto [ec1, r1] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    auto [ec2, r2] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    REQUIRE_FALSE(ec1);
    REQUIRE_FALSE(ec2);
    CHECK(r1.entry);
    CHECK(r2.entry);
    CHECK(server.connections() == 1);
    CHECK(server.handshakes() == 1);
    CHECK(c.stats().connects == 1);
    CHECK(c.stats().requests == 2);
    REQUIRE(server.requests().size() == 2);
    CHECK(server.requests()[1].connection == 0);
    CHECK(server.requests()[1].sequence == 1);
}

TEST_CASE(
    "a TLS keep-alive connection the server closed is not used again: seen idle, or retried once",
    "[tls]") {
    // The server closes every connection after one response without saying so in HTTP,
    // either with a TLS close_notify (as Go's server does) or by dropping the TCP connection
    // (a crashed server, a middlebox): both must read as a stale connection.
    const bool abrupt = GENERATE(false, true);
    INFO("abrupt close: " << abrupt);
    test_pki pki;
    asio::io_context ioc;
    auto server_tls = server_context(pki);
    scripted_server server{ioc, server_tls, [abrupt](const received_request& r) {
                               auto reply = ok_entry(r);
                               reply.close_after = true;
                               reply.abrupt_close = abrupt;
                               return reply;
                           }};
    client c{ioc.get_executor(), tls_config_for(server, pki.ca_cert)};
    auto [ec1, r1] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    REQUIRE_FALSE(ec1);
    // The close must have reached the client before its next request, or this would test
    // nothing TLS-specific.
    run_until(ioc, [&] { return server.requests().size() == 1; });
    run_for(ioc, 50ms);
    auto [ec2, r2] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    INFO(ec2.message());
    REQUIRE_FALSE(ec2);
    CHECK(r2.entry);
    CHECK(server.connections() == 2);
    // A dropped TCP connection is seen by the pool while idle: no retry needed. A
    // close_notify came with the response and was read into the TLS layer, so the socket
    // looks idle: the GET fails on it and is retried once on a new connection.
    CHECK(c.stats().retries == (abrupt ? 0u : 1u));
}

TEST_CASE("a TLS handshake that never completes times out with errc::timeout", "[tls]") {
    test_pki pki;
    asio::io_context ioc;
    // Accepts connections and never says a word.
    asio::ip::tcp::acceptor silent{ioc, {asio::ip::make_address("127.0.0.1"), 0}};
    std::vector<asio::ip::tcp::socket> held;
    silent.async_accept([&](error_code ec, asio::ip::tcp::socket s) {
        if (!ec)
            held.push_back(std::move(s));
    });
    client_config cfg;
    cfg.port = silent.local_endpoint().port();
    cfg.connect_timeout = 200ms;
    cfg.tls.enabled = true;
    cfg.tls.ca_file = pki.ca_cert;
    client c{ioc.get_executor(), cfg};
    const auto start = std::chrono::steady_clock::now();
    auto [ec, r] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    CHECK(ec == errc::timeout);
    CHECK(is_retryable(ec));
    CHECK(std::chrono::steady_clock::now() - start >= 150ms);
    CHECK(held.size() == 1);
}

TEST_CASE("unusable TLS settings make the client constructor throw system_error", "[tls]") {
    test_pki pki;
    asio::io_context ioc;
    tls_config tls;
    tls.enabled = true;
    const std::string missing = pki.dir() + "/missing.pem";
    const std::string garbage = pki.dir() + "/garbage.pem";
    std::ofstream{garbage} << "not a certificate\n";

    std::string culprit; // what the message must name

    SECTION("a missing ca_file") {
        tls.ca_file = missing;
        culprit = "ca_file '" + missing + "'";
    }
    SECTION("a ca_file without certificates") {
        tls.ca_file = garbage;
        culprit = "ca_file '" + garbage + "'";
    }
    SECTION("a missing ca_path") {
        tls.ca_path = missing;
        culprit = "ca_path '" + missing + "'";
    }
    SECTION("a ca_path that is a file") {
        tls.ca_path = pki.ca_cert;
        culprit = "ca_path '" + pki.ca_cert + "'";
    }
    SECTION("a missing client certificate") {
        tls.ca_file = pki.ca_cert;
        tls.cert_file = missing;
        tls.key_file = pki.client_key;
        culprit = "cert_file '" + missing + "'";
    }
    SECTION("a client key that does not match the certificate") {
        tls.ca_file = pki.ca_cert;
        tls.cert_file = pki.client_cert;
        tls.key_file = pki.server_key;
        culprit = "key_file '" + pki.server_key + "'";
    }
    SECTION("a client certificate without its key") {
        tls.ca_file = pki.ca_cert;
        tls.cert_file = pki.client_cert;
        culprit = "cert_file and key_file";
    }
    SECTION("a client key without its certificate") {
        tls.ca_file = pki.ca_cert;
        tls.key_file = pki.client_key;
        culprit = "cert_file and key_file";
    }

    // Where it is built...
    CHECK_THROWS_AS(detail::http::make_tls_context(tls), boost::system::system_error);
    // ... and where a user meets it: constructing the client, never on first request, and
    // never by falling back to the system's CAs.
    client_config cfg;
    cfg.tls = tls;
    try {
        client c{ioc.get_executor(), cfg};
        FAIL("the client accepted unusable TLS settings");
    } catch (const boost::system::system_error& e) {
        INFO(e.what());
        CHECK(e.code());
        CHECK(std::string(e.what()).find(culprit) != std::string::npos);
    }
}

TEST_CASE("CONSUL_HTTP_ADDR=https://localhost plus CONSUL_CACERT and client certificates",
          "[tls]") {
    test_pki pki;
    asio::io_context ioc;
    auto server_tls = server_context(pki, true);
    scripted_server server{ioc, server_tls, ok_entry};
    const std::map<std::string, std::string, std::less<>> env{
        {"CONSUL_HTTP_ADDR", "https://localhost:" + std::to_string(server.port())},
        {"CONSUL_CACERT", pki.ca_cert},
        {"CONSUL_CLIENT_CERT", pki.client_cert},
        {"CONSUL_CLIENT_KEY", pki.client_key},
    };
    auto cfg = config_from_env([&](std::string_view name) -> std::optional<std::string> {
        if (auto it = env.find(name); it != env.end())
            return it->second;
        return std::nullopt;
    });
    REQUIRE(cfg.tls.enabled);
    CHECK(cfg.tls.verify);
    CHECK(cfg.host == "localhost");
    CHECK(cfg.port == server.port());
    CHECK(cfg.tls.server_name.empty()); // the host name itself is verified
    client c{ioc.get_executor(), cfg};
    auto [ec, r] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    INFO(ec.message());
    REQUIRE_FALSE(ec);
    CHECK(r.entry);
    REQUIRE(server.requests().size() == 1);
    CHECK(server.requests()[0].server_name == "localhost");
    CHECK(server.requests()[0].client_subject == "conclave-test-client");
    CHECK(server.requests()[0].message[bhttp::field::host] ==
          "localhost:" + std::to_string(server.port()));
}
