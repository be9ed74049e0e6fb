// SPDX-License-Identifier: BSL-1.0
// The client's HTTP behaviour against scripted servers: status mapping, diagnostics,
// broken connections, stale keep-alive retries, timeouts, pool limits, cancellation.
#include "scripted_server.hpp"
#include "support/catch.hpp"
#include "support/run.hpp"

#include <conclave/client.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

constexpr auto tuple_token = asio::as_tuple(asio::use_awaitable);
constexpr auto awaitable = asio::use_awaitable;

const std::vector<std::pair<std::string, std::string>> meta_headers{
    {"Content-Type", "application/json"},
    {"X-Consul-Index", "42"},
    {"X-Consul-Knownleader", "true"},
    {"X-Consul-Lastcontact", "7"},
};

client_config config_for(const scripted_server& s) {
    client_config cfg;
    cfg.port = s.port();
    cfg.request_timeout = 2s;
    return cfg;
}

scripted_reply ok_entry(const received_request&) {
    return {http_response(
        200,
        R"([{"LockIndex":0,"Key":"k","Flags":0,"Value":"dg==","CreateIndex":5,"ModifyIndex":6}])",
        meta_headers)};
}

using elapsed = std::chrono::nanoseconds;

// Awaits `before` (the requests that use the connection first), then times a GET of "k".
template <class Before>
std::pair<error_code, elapsed> time_get_after(asio::io_context& ioc, client& c, Before before) {
    auto scenario = [&]() -> asio::awaitable<std::pair<error_code, elapsed>> {
        if (const error_code ec = co_await before())
            co_return std::pair{ec, elapsed{}};
        const auto start = std::chrono::steady_clock::now();
        auto [ec, r] = co_await c.async_kv_get("k", {}, tuple_token);
        co_return std::pair{ec, std::chrono::steady_clock::now() - start};
    };
    return run(ioc, scenario());
}

} // namespace

TEST_CASE("a 500 maps to server_error with Consul's text in diagnostics", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request&) {
                               return scripted_reply{http_response(500, "No cluster leader")};
                           }};
    client c{ioc.get_executor(), config_for(server)};
    diagnostics diag;
    auto [ec, r] = run(ioc, c.async_kv_get("k", query_options{}.with_diag(&diag), tuple_token));
    CHECK(ec == errc::server_error);
    CHECK(is_retryable(ec));
    CHECK(diag.http_status == 500);
    CHECK(diag.server_message == "No cluster leader");
    CHECK_FALSE(r.entry.has_value());
}

TEST_CASE("statuses map to their errc", "[http]") {
    const std::vector<std::pair<unsigned, errc>> cases{
        {400, errc::bad_request},  {403, errc::permission_denied}, {413, errc::request_too_large},
        {429, errc::rate_limited}, {503, errc::unavailable},       {418, errc::unexpected_status}};
    for (const auto& [status, expected] : cases) {
        asio::io_context ioc;
        scripted_server server{ioc, [status = status](const received_request&) {
                                   return scripted_reply{http_response(status, "nope")};
                               }};
        client c{ioc.get_executor(), config_for(server)};
        auto [ec, ok] = run(ioc, c.async_kv_put("k", "v", {}, tuple_token));
        CHECK(ec == expected);
        CHECK_FALSE(ok);
    }
}

TEST_CASE("a 404 on a KV read is an empty result that keeps the index", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request&) {
                               return scripted_reply{
                                   http_response(404, "",
                                                 {{"X-Consul-Index", "9"},
                                                  {"X-Consul-Knownleader", "true"},
                                                  {"X-Consul-Lastcontact", "0"}})};
                           }};
    client c{ioc.get_executor(), config_for(server)};
    auto [ec, r] = run(ioc, c.async_kv_get("missing", {}, tuple_token));
    REQUIRE_FALSE(ec);
    CHECK_FALSE(r.entry.has_value());
    CHECK(r.meta.index == 9);
    CHECK(r.meta.known_leader);
}

TEST_CASE("meta headers are read case-insensitively", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, ok_entry};
    client c{ioc.get_executor(), config_for(server)};
    auto r = run(ioc, c.async_kv_get("k", {}, awaitable));
    REQUIRE(r.entry);
    CHECK(r.entry->value == "v");
    CHECK(r.entry->modify_index == 6);
    CHECK(r.meta.index == 42);
    CHECK(r.meta.known_leader);
    CHECK(r.meta.last_contact == 7ms);
}

TEST_CASE("a chunked response with lower-case meta headers keeps its connection", "[http]") {
    asio::io_context ioc;
    scripted_server server{
        ioc, [](const received_request&) {
            return scripted_reply{
                "HTTP/1.1 200 OK\r\n"
                "content-type: application/json\r\n"
                "x-consul-index: 42\r\n"
                "x-consul-knownleader: true\r\n"
                "x-consul-lastcontact: 7\r\n"
                "transfer-encoding: chunked\r\n"
                "\r\n"
                "24\r\n[{\"LockIndex\":0,\"Key\":\"k\",\"Flags\":0,\r\n"
                "30\r\n\"Value\":\"dg==\",\"CreateIndex\":5,\"ModifyIndex\":6}]\r\n"
                "0\r\n\r\n"};
        }};
    client c{ioc.get_executor(), config_for(server)};
    for (int i = 0; i < 2; ++i) {
        auto r = run(ioc, c.async_kv_get("k", {}, awaitable));
        REQUIRE(r.entry);
        CHECK(r.entry->value == "v");
        CHECK(r.entry->modify_index == 6);
        CHECK(r.meta.index == 42);
        CHECK(r.meta.known_leader);
        CHECK(r.meta.last_contact == 7ms);
    }
    CHECK(server.connections() == 1);
}

TEST_CASE("a response with Connection: close is not reused and not retried", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request&) {
                               return scripted_reply{http_response(200, "true", {}, false)};
                           }};
    client c{ioc.get_executor(), config_for(server)};
    CHECK(run(ioc, c.async_kv_put("k", "v", {}, awaitable)));
    CHECK(run(ioc, c.async_kv_put("k", "v", {}, awaitable)));
    CHECK(server.connections() == 2);
    CHECK(c.stats().retries == 0);
}

TEST_CASE("a PUT without a body says Content-Length: 0", "[http]") {
    asio::io_context ioc;
    scripted_server server{
        ioc, [](const received_request&) { return scripted_reply{http_response(200, "true")}; }};
    client c{ioc.get_executor(), config_for(server)};
    CHECK(run(ioc, c.async_session_destroy("6b2c8a38-6bd9-4a0a-bd58-46b0b1de5a3b", {}, awaitable)));
    REQUIRE(server.requests().size() == 1);
    const auto& put = server.requests()[0].message;
    CHECK(put.method() == bhttp::verb::put);
    CHECK(put[bhttp::field::content_length] == "0");
    CHECK(put[bhttp::field::host] == "127.0.0.1:" + std::to_string(server.port()));
    CHECK(put[bhttp::field::user_agent] == "conclave/0.1");
    CHECK(put.find("X-Consul-Token") == put.end());
    CHECK(put.keep_alive());
}

// A request is first sent without waiting, as far as the socket takes it; what does not fit
// (a value larger than the socket's buffers: a unix socket takes about 200 KB) must still
// follow, in order.
TEST_CASE("a request larger than the socket's send buffer arrives whole", "[http]") {
    asio::io_context ioc;
    const auto answer = [](const received_request&) {
        return scripted_reply{http_response(200, "true")};
    };
    const std::string path = "/tmp/conclave-test-big-" + std::to_string(::getpid()) + ".sock";
    scripted_server over_unix{ioc, path, answer};
    scripted_server over_tcp{ioc, answer};
    client_config unix_cfg;
    REQUIRE(apply_http_addr(unix_cfg, "unix://" + path).empty());
    std::string value(400 * 1024, '\0');
    for (std::size_t i = 0; i < value.size(); ++i)
        value[i] = char('a' + (i * 7 + i / 1024) % 26);
    for (auto* server : {&over_unix, &over_tcp}) {
        client c{ioc.get_executor(), server == &over_unix ? unix_cfg : config_for(*server)};
        for (int round = 0; round < 2; ++round) // a new connection, then a reused one
            CHECK(run(ioc, c.async_kv_put("big", value, kv_put_options{}, awaitable)));
        REQUIRE(server->requests().size() == 2);
        CHECK(server->connections() == 1);
        for (const auto& r : server->requests())
            CHECK(r.message.body() == value);
    }
}

TEST_CASE("a token or host that would break the request head is refused up front", "[http]") {
    asio::io_context ioc;
    for (std::string value :
         {std::string("t\r\nX-Evil: 1"), std::string("t\n"), std::string("t\0x", 3)}) {
        client_config with_token;
        with_token.token = value;
        client_config with_host;
        with_host.host = "127.0.0.1" + value;
        CHECK_THROWS_WITH(client(ioc.get_executor(), with_token), contains_text("token"));
        CHECK_THROWS_WITH(client(ioc.get_executor(), with_host), contains_text("host"));
    }
}

TEST_CASE("the request carries the token, encoded key and query options", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request& r) {
                               if (r.message.method() == bhttp::verb::put)
                                   return scripted_reply{http_response(200, "true")};
                               return ok_entry(r);
                           }};
    auto cfg = config_for(server);
    cfg.token = "secret-token";
    cfg.datacenter = "dc9";
    client c{ioc.get_executor(), cfg};
    run(ioc, c.async_kv_get("a b/c?d",
                            query_options{}.with_index(17).with_wait(1500ms).with_mode(
                                consistency::consistent),
                            awaitable));
    run(ioc, c.async_kv_put("lock/key", "body",
                            kv_put_options{}
                                .with_flags(lock_flag_value)
                                .with_acquire("sess-1")
                                .with_datacenter("dc2"),
                            awaitable));
    REQUIRE(server.requests().size() == 2);
    const auto& get = server.requests()[0].message;
    CHECK(get.target() == "/v1/kv/a%20b/c%3Fd?index=17&wait=1500ms&consistent&dc=dc9");
    CHECK(get["X-Consul-Token"] == "secret-token");
    const auto& put = server.requests()[1].message;
    CHECK(put.target() == "/v1/kv/lock/key?flags=3304740253564472344&acquire=sess-1&dc=dc2");
    CHECK(put.body() == "body");
    CHECK(put[bhttp::field::content_type] == "application/octet-stream");
}

TEST_CASE("keys Consul would reject are refused without a request", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, ok_entry};
    client c{ioc.get_executor(), config_for(server)};
    diagnostics diag;
    auto [ec1, ok] =
        run(ioc, c.async_kv_put("/abs", "v", kv_put_options{}.with_diag(&diag), tuple_token));
    CHECK(ec1 == errc::invalid_argument);
    CHECK(diag.client_message.find("/abs") != std::string::npos);
    auto [ec2, r] = run(ioc, c.async_kv_get("a//b", {}, tuple_token));
    CHECK(ec2 == errc::invalid_argument);
    auto [ec3, ok3] = run(
        ioc, c.async_kv_put("k", "v", kv_put_options{}.with_cas(0).with_acquire("s"), tuple_token));
    CHECK(ec3 == errc::invalid_argument);
    CHECK(server.requests().empty());
}

TEST_CASE("a server closing mid-response is an error, never a success", "[http]") {
    asio::io_context ioc;
    scripted_server server{
        ioc, [](const received_request&) {
            return scripted_reply{"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n[{\"Key\"", true};
        }};
    client c{ioc.get_executor(), config_for(server)};
    diagnostics diag;
    auto [ec, r] = run(ioc, c.async_kv_get("k", query_options{}.with_diag(&diag), tuple_token));
    CHECK(ec);
    CHECK(is_retryable(ec));
    CHECK_FALSE(r.entry.has_value());
    CHECK(diag.client_message.find("/v1/kv/k") != std::string::npos);
}

TEST_CASE("malformed JSON is bad_response", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request&) {
                               return scripted_reply{http_response(200, "[{not json")};
                           }};
    client c{ioc.get_executor(), config_for(server)};
    auto [ec, r] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    CHECK(ec == errc::bad_response);
}

TEST_CASE("a response larger than max_response_body is refused", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request&) {
                               return scripted_reply{http_response(200, std::string(4096, 'x'))};
                           }};
    auto cfg = config_for(server);
    cfg.max_response_body = 1024;
    client c{ioc.get_executor(), cfg};
    auto [ec, r] = run(ioc, c.async_kv_get_raw("k", {}, tuple_token));
    CHECK(ec);
}

TEST_CASE("a chunked response larger than max_response_body is refused", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request&) {
                               std::string raw =
                                   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
                               for (int i = 0; i < 8; ++i)
                                   raw += "200\r\n" + std::string(512, 'x') + "\r\n";
                               raw += "0\r\n\r\n";
                               return scripted_reply{raw};
                           }};
    auto cfg = config_for(server);
    cfg.max_response_body = 1024;
    client c{ioc.get_executor(), cfg};
    auto [ec, r] = run(ioc, c.async_kv_get_raw("k", {}, tuple_token));
    CHECK(ec == bhttp::error::body_limit);
}

TEST_CASE("a reply of one entry is held to max_entry_response_body, a list to "
          "max_response_body, and the error names the limit",
          "[http]") {
    asio::io_context ioc;
    // A 2 MiB body, chunked (no length announced): a misbehaving or hostile server.
    const std::string big = [] {
        std::string raw = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n";
        const std::string chunk = std::string(64 * 1024 - 2, ' ') + "[]";
        for (int i = 0; i < 32; ++i)
            raw += "10000\r\n" + chunk + "\r\n";
        return raw + "0\r\n\r\n";
    }();
    scripted_server server{ioc, [&](const received_request&) { return scripted_reply{big}; }};
    auto cfg = config_for(server);
    client c{ioc.get_executor(), cfg};
    diagnostics diag;
    auto [ec, r] = run(ioc, c.async_kv_get("k", query_options{}.with_diag(&diag), tuple_token));
    CHECK(ec == bhttp::error::body_limit); // one key: 1 MiB by default
    CHECK(diag.client_message.find("max_entry_response_body") != std::string::npos);
    auto [sec, s] = run(ioc, c.async_session_create(session_options{}, tuple_token));
    CHECK(sec == bhttp::error::body_limit);
    // A list may be as large as the tree: 64 MiB by default.
    auto [lec, l] = run(ioc, c.async_kv_list("k", query_options{}, tuple_token));
    CHECK(lec != bhttp::error::body_limit);
    // Raised for a Consul with a larger kv_max_value_size: accepted.
    cfg.max_entry_response_body = 4 << 20;
    client raised{ioc.get_executor(), cfg};
    auto [rec, rr] = run(ioc, raised.async_kv_get("k", {}, tuple_token));
    CHECK(rec != bhttp::error::body_limit);
}

TEST_CASE("connection refused is a retryable error naming the address", "[http]") {
    asio::io_context ioc;
    std::uint16_t port = 0;
    {
        asio::ip::tcp::acceptor probe{ioc, {asio::ip::make_address("127.0.0.1"), 0}};
        port = probe.local_endpoint().port();
    } // closed: nothing listens there now
    client_config cfg;
    cfg.port = port;
    client c{ioc.get_executor(), cfg};
    diagnostics diag;
    auto [ec, r] = run(ioc, c.async_kv_get("k", query_options{}.with_diag(&diag), tuple_token));
    CHECK(ec == asio::error::connection_refused);
    CHECK(is_retryable(ec));
    CHECK(diag.client_message.find(std::to_string(port)) != std::string::npos);
}

TEST_CASE("a GET on a stale keep-alive connection is retried once on a new one", "[http]") {
    asio::io_context ioc;
    // Every connection serves one request, then the server closes it without saying so
    // (no Connection: close), as an idle timeout on the server side would.
    scripted_server server{ioc, [](const received_request& r) {
                               auto reply = ok_entry(r);
                               reply.close_after = true;
                               return reply;
                           }};
    client c{ioc.get_executor(), config_for(server)};
    run(ioc, c.async_kv_get("k", {}, awaitable));
    // Let the client notice nothing: the close races with the next request on purpose.
    auto r = run(ioc, c.async_kv_get("k", {}, awaitable));
    CHECK(r.entry);
    CHECK(server.connections() == 2);
    CHECK(c.stats().retries == 1);
}

TEST_CASE("a PUT on a stale keep-alive connection is not retried", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request&) {
                               return scripted_reply{http_response(200, "true"), true};
                           }};
    client c{ioc.get_executor(), config_for(server)};
    CHECK(run(ioc, c.async_kv_put("k", "v", {}, awaitable)));
    auto [ec, ok] = run(ioc, c.async_kv_put("k", "v", {}, tuple_token));
    CHECK(ec);
    CHECK_FALSE(ok);
    CHECK(server.requests().size() == 1); // the second write was never delivered twice
    CHECK(c.stats().retries == 0);
}

TEST_CASE("a server that never answers times out with errc::timeout", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request&) {
                               scripted_reply r;
                               r.hang = true;
                               return r;
                           }};
    auto cfg = config_for(server);
    cfg.request_timeout = 200ms;
    client c{ioc.get_executor(), cfg};
    const auto start = std::chrono::steady_clock::now();
    auto [ec, r] = run(ioc, c.async_kv_get("k", {}, tuple_token));
    CHECK(ec == errc::timeout);
    CHECK(std::chrono::steady_clock::now() - start >= 150ms);
}

// A connection's timer stays on the expiry of an earlier exchange; these check that each
// exchange still gets its own deadline, neither later nor earlier.
TEST_CASE("a request that hangs after answered ones on its connection times out on time",
          "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request& r) {
                               if (r.sequence < 3)
                                   return ok_entry(r);
                               scripted_reply hang;
                               hang.hang = true;
                               return hang;
                           }};
    auto cfg = config_for(server);
    cfg.request_timeout = 300ms;
    client c{ioc.get_executor(), cfg};
    auto three_answered = [&]() -> asio::awaitable<error_code> {
        for (int i = 0; i < 3; ++i) {
            auto [ec, r] = co_await c.async_kv_get("k", {}, tuple_token);
            if (ec)
                co_return ec;
        }
        co_return error_code{};
    };
    auto [ec, took] = time_get_after(ioc, c, three_answered);
    CHECK(ec == errc::timeout);
    CHECK(took >= 250ms);
    CHECK(took < 2s);
    CHECK(server.connections() == 1);
}

TEST_CASE("a short request after a long blocking read on its connection keeps its own timeout",
          "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request& r) {
                               if (r.sequence == 0) {
                                   auto reply = ok_entry(r); // the blocking read
                                   reply.delay = 50ms;
                                   return reply;
                               }
                               scripted_reply hang;
                               hang.hang = true;
                               return hang;
                           }};
    auto cfg = config_for(server);
    cfg.request_timeout = 300ms;
    client c{ioc.get_executor(), cfg};
    auto long_read = [&]() -> asio::awaitable<error_code> {
        // Bounded by 300 ms + 10 s + jitter: the connection's timer waits for that.
        // (The connect before it, bounded by connect_timeout, set the timer first.)
        auto [ec, r] =
            co_await c.async_kv_get("k", query_options{}.with_index(5).with_wait(10s), tuple_token);
        co_return ec;
    };
    auto [ec, took] = time_get_after(ioc, c, long_read);
    CHECK(ec == errc::timeout);
    CHECK(took >= 250ms);
    CHECK(took < 2s);
    CHECK(server.connections() == 1);
}

TEST_CASE("a blocking read gets wait plus jitter plus the request timeout", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request& r) {
                               auto reply = ok_entry(r);
                               reply.delay = 400ms; // longer than request_timeout alone
                               return reply;
                           }};
    auto cfg = config_for(server);
    cfg.request_timeout = 200ms;
    client c{ioc.get_executor(), cfg};
    auto [ec, r] =
        run(ioc, c.async_kv_get("k", query_options{}.with_index(5).with_wait(300ms), tuple_token));
    CHECK_FALSE(ec);
    CHECK(r.entry);
}

TEST_CASE("the pool never opens more than max_connections", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request& r) {
                               auto reply = ok_entry(r);
                               reply.delay = 20ms;
                               return reply;
                           }};
    auto cfg = config_for(server);
    cfg.max_connections = 2;
    client c{ioc.get_executor(), cfg};
    auto one = [](client& c) -> asio::awaitable<int> {
        auto r = co_await c.async_kv_get("k");
        co_return r.entry ? 1 : 0;
    };
    auto many = [&](client& c) -> asio::awaitable<int> {
        using namespace asio::experimental::awaitable_operators;
        auto a = one(c);
        auto b = one(c);
        auto both = co_await (std::move(a) && std::move(b));
        co_return std::get<0>(both) + std::get<1>(both);
    };
    // Six requests at once through two connections.
    auto six = [&]() -> asio::awaitable<int> {
        using namespace asio::experimental::awaitable_operators;
        auto x = many(c);
        auto y = many(c);
        auto z = many(c);
        auto all = co_await (std::move(x) && std::move(y) && std::move(z));
        co_return std::get<0>(all) + std::get<1>(all) + std::get<2>(all);
    };
    CHECK(run(ioc, six()) == 6);
    CHECK(server.connections() <= 2);
    CHECK(c.stats().connects <= 2);
}

TEST_CASE("a request waiting for a pooled connection times out", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request& r) {
                               if (r.message.target().find("index=") != std::string::npos) {
                                   scripted_reply hang;
                                   hang.hang = true;
                                   return hang;
                               }
                               return ok_entry(r);
                           }};
    auto cfg = config_for(server);
    cfg.max_connections = 1;
    cfg.request_timeout = 200ms;
    client c{ioc.get_executor(), cfg};
    auto scenario = [&]() -> asio::awaitable<error_code> {
        using namespace asio::experimental::awaitable_operators;
        // The blocking read holds the only connection for ~1 s.
        auto result = co_await (
            c.async_kv_get("k", query_options{}.with_index(3).with_wait(1s), tuple_token) ||
            c.async_kv_get("k", {}, tuple_token));
        co_return std::get<0>(std::get<1>(result));
    };
    CHECK(run(ioc, scenario()) == errc::timeout);
}

TEST_CASE("blocking queries leave a connection free for short requests", "[http]") {
    // (without the lane, the second poll would take the second connection)
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request& r) {
                               if (r.message.target().find("index=") != std::string::npos) {
                                   scripted_reply hang; // a long poll that does not return
                                   hang.hang = true;
                                   return hang;
                               }
                               return ok_entry(r);
                           }};
    auto cfg = config_for(server);
    cfg.max_connections = 2; // blocking queries may hold one of the two
    cfg.request_timeout = 300ms;
    client c{ioc.get_executor(), cfg};
    auto scenario = [&]() -> asio::awaitable<std::pair<error_code, error_code>> {
        using namespace asio::experimental::awaitable_operators;
        auto poll = [&]() {
            return c.async_kv_get("k", query_options{}.with_index(3).with_wait(5s), tuple_token);
        };
        auto first = poll();
        auto second = poll(); // waits for the lane, not for the pool
        auto quick = c.async_kv_get("k", {}, tuple_token);
        auto outcome = co_await (std::move(first) || std::move(second) || std::move(quick));
        if (outcome.index() != 2)
            co_return std::pair{make_error_code(errc::bad_response), error_code{}};
        auto [ec, r] = std::get<2>(outcome);
        co_return std::pair{ec, r.entry ? error_code{} : make_error_code(errc::not_found)};
    };
    // The short request got the reserved connection while both polls were pending (it
    // would otherwise wait behind them and time out after 300 ms).
    auto [ec, missing] = run(ioc, scenario());
    CHECK_FALSE(ec);
    CHECK_FALSE(missing);
    CHECK(server.connections() <= 2);
}

TEST_CASE("cancelling a request completes with operation_aborted and frees its slot", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request& r) {
                               if (r.message.target().find("hang") != std::string::npos) {
                                   scripted_reply hang;
                                   hang.hang = true;
                                   return hang;
                               }
                               return ok_entry(r);
                           }};
    auto cfg = config_for(server);
    cfg.max_connections = 1;
    client c{ioc.get_executor(), cfg};
    auto scenario = [&]() -> asio::awaitable<std::pair<error_code, bool>> {
        asio::cancellation_signal cancel;
        asio::steady_timer t{c.get_executor(), 100ms};
        t.async_wait([&](error_code) { cancel.emit(asio::cancellation_type::terminal); });
        auto [ec, r] = co_await c.async_kv_get(
            "hang", {}, asio::bind_cancellation_slot(cancel.slot(), tuple_token));
        auto [ec2, r2] = co_await c.async_kv_get("k", {}, tuple_token);
        co_return std::pair{ec, !ec2 && r2.entry.has_value()};
    };
    auto [ec, second_ok] = run(ioc, scenario());
    CHECK(ec == asio::error::operation_aborted);
    CHECK(second_ok);
}

TEST_CASE("a client talks over a unix socket", "[http]") {
    asio::io_context ioc;
    const std::string path = "/tmp/conclave-test-" + std::to_string(::getpid()) + ".sock";
    scripted_server server{ioc, path, ok_entry};
    client_config cfg;
    REQUIRE(apply_http_addr(cfg, "unix://" + path).empty());
    client c{ioc.get_executor(), cfg};
    auto r = run(ioc, c.async_kv_get("k", {}, awaitable));
    CHECK(r.entry);
}

TEST_CASE("close() fails requests waiting for a connection with pool_closed", "[http]") {
    asio::io_context ioc;
    scripted_server server{ioc, [](const received_request&) {
                               scripted_reply hang;
                               hang.hang = true;
                               return hang;
                           }};
    auto cfg = config_for(server);
    cfg.max_connections = 1;
    client c{ioc.get_executor(), cfg};
    std::vector<error_code> results;
    auto record = [&](error_code ec, const kv_get_result&) { results.push_back(ec); };
    c.async_kv_get("x", {}, record); // takes the only connection; the server hangs
    c.async_kv_get("y", {}, record); // waits for that connection
    run_until(ioc, [&] { return server.requests().size() == 1; });
    c.close();
    run_until(ioc, [&] { return results.size() == 1; });
    CHECK(results[0] == errc::pool_closed); // the waiter failed at once
    server.stop();
    run_until(ioc, [&] { return results.size() == 2; });
    CHECK(results[1]);
}
