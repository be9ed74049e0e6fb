// SPDX-License-Identifier: BSL-1.0
// What a failed operation tells its caller: with the default completion token, a
// conclave::error whose text carries Consul's own words (or conclave's description).
#include "client_fixture.hpp"
#include "support/catch.hpp"

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

} // namespace

TEST_CASE_METHOD(client_fixture, "awaited with the default token, a failure throws Consul's text",
                 "[client][errors]") {
    auto body = [&]() -> asio::awaitable<void> {
        bool thrown = false;
        try {
            co_await consul.async_session_create(
                session_options{}.with_ttl(100h).without_node_checks());
        } catch (const conclave::error& e) {
            thrown = true;
            CHECK(e.code() == errc::server_error);
            CHECK(e.diag().http_status == 500);
            CHECK(contains(e.diag().server_message, "Invalid Session TTL"));
            // Consul's words after ours (a follower prefixes them with "rpc error making
            // call: "), and the request they answer.
            CHECK(contains(e.what(), "Consul server error (HTTP 500): "));
            CHECK(contains(e.what(), "Invalid Session TTL"));
            CHECK(contains(e.what(), "PUT /v1/session/create"));
        }
        CHECK(thrown);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "the default token also fills the caller's diagnostics",
                 "[client][errors]") {
    auto body = [&]() -> asio::awaitable<void> {
        diagnostics diag;
        std::string what;
        try {
            co_await consul.async_session_create(
                session_options{}.with_ttl(100h).without_node_checks().with_diag(&diag));
        } catch (const boost::system::system_error& e) { // conclave::error is one
            CHECK(e.code() == errc::server_error);
            what = e.what();
        }
        CHECK(diag.http_status == 500);
        CHECK(contains(diag.server_message, "Invalid Session TTL"));
        CHECK(contains(what, "Invalid Session TTL"));
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a failure found before sending throws conclave's description",
                 "[client][errors]") {
    auto body = [&]() -> asio::awaitable<void> {
        bool thrown = false;
        try {
            co_await consul.async_kv_get("a//b");
        } catch (const conclave::error& e) {
            thrown = true;
            CHECK(e.code() == errc::invalid_argument);
            CHECK(e.diag().http_status == 0);
            CHECK(e.diag().server_message.empty());
            CHECK_FALSE(e.diag().client_message.empty());
            CHECK(contains(e.what(), e.diag().client_message));
        }
        CHECK(thrown);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a token that keeps the error code completes without throwing",
                 "[client][errors]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto [ec, id] = co_await consul.async_session_create(
            session_options{}.with_ttl(100h).without_node_checks(), tuple_token);
        CHECK(ec == errc::server_error);
        CHECK(id.empty());
        // with_diagnostics wraps any token: here it turns the code into an exception_ptr.
        auto [e, id2] = co_await consul.async_session_create(
            session_options{}.with_ttl(100h).without_node_checks(),
            with_diagnostics(asio::as_tuple(asio::use_awaitable)));
        REQUIRE(e);
        CHECK_THROWS_WITH(std::rethrow_exception(e), contains_text("Invalid Session TTL"));
    };
    run(ioc, body());
}
