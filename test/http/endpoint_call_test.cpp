// SPDX-License-Identifier: BSL-1.0
// detail::call, the one way the public API and the recipes call an endpoint: its deadline and
// cancellation.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "scripted_server.hpp"
#include "support/cancel_after.hpp"
#include "support/catch.hpp"
#include "support/run.hpp"

#include <conclave/client.hpp>
#include <conclave/lock.hpp>
#include <conclave/session.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

scripted_reply hang(const received_request&) {
    scripted_reply r;
    r.hang = true;
    return r;
}

detail::endpoint::txn one_get() {
    return detail::endpoint::txn{{txn_op::get("k")}, txn_options{}};
}

client make_client(asio::io_context& ioc, const scripted_server& server,
                   std::chrono::milliseconds request_timeout) {
    client_config cfg;
    cfg.port = server.port();
    cfg.request_timeout = request_timeout;
    return client{ioc.get_executor(), cfg};
}

// How a call of `e` to a server that never answers ends with a deadline 200 ms away, and
// how long it took.
template <class E>
std::pair<error_code, std::chrono::nanoseconds> with_deadline_soon(E e) {
    asio::io_context ioc;
    scripted_server server{ioc, hang};
    client c = make_client(ioc, server, 20s);
    auto scenario = [&]() -> asio::awaitable<std::pair<error_code, std::chrono::nanoseconds>> {
        const auto start = std::chrono::steady_clock::now();
        auto [ec, r] = co_await detail::call(c, std::move(e), start + 200ms);
        co_return std::pair{ec, std::chrono::steady_clock::now() - start};
    };
    return run(ioc, scenario());
}

// How a call of `e` to a server that never answers ends when its caller is cancelled after
// 100 ms: with an error (none when it threw), and after how long.
struct cancelled_call {
    std::optional<error_code> outcome;
    bool threw = false;
    std::chrono::nanoseconds took{};
};

template <class E>
cancelled_call cancel_soon(E e, std::chrono::milliseconds request_timeout) {
    asio::io_context ioc;
    scripted_server server{ioc, hang};
    client c = make_client(ioc, server, request_timeout);
    cancel_after cancel{ioc.get_executor(), 100ms};
    cancelled_call result;
    const auto start = std::chrono::steady_clock::now();
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<error_code> {
            auto [ec, r] = co_await detail::call(c, std::move(e));
            co_return ec;
        },
        cancel.bind([&](std::exception_ptr ex, error_code ec) {
            result.threw = ex != nullptr;
            result.outcome = ec;
            result.took = std::chrono::steady_clock::now() - start;
        }));
    run_until(
        ioc, [&] { return result.threw || result.outcome.has_value(); }, 30s);
    cancel.disarm();
    return result;
}

} // namespace

TEST_CASE("endpoint call: a deadline before the request timeout ends a write with errc::timeout",
          "[http]") {
    auto [ec, took] = with_deadline_soon(one_get());
    CHECK(ec == errc::timeout);
    CHECK(took >= 150ms);
    CHECK(took < 5s);
}

TEST_CASE("endpoint call: a deadline ends a read with errc::timeout", "[http]") {
    auto [ec, took] = with_deadline_soon(detail::endpoint::kv_get{"k", query_options{}});
    CHECK(ec == errc::timeout);
    CHECK(took >= 150ms);
    CHECK(took < 5s);
}

// A read abandoned by its caller ends at once: nothing was written that needs finishing.
TEST_CASE("endpoint call: cancelling a read completes with operation_aborted at once",
          "[http][cancel]") {
    const auto r = cancel_soon(detail::endpoint::kv_get{"k", query_options{}}, 20s);
    CHECK_FALSE(r.threw);
    REQUIRE(r.outcome);
    CHECK(*r.outcome == asio::error::operation_aborted);
    CHECK(r.took < 10s); // not held until the request timeout
}

// A transaction is a write: once sent it is finished first (here: the server never answers,
// so until the request timeout), then the cancellation is reported.
TEST_CASE("endpoint call: cancelling a write completes with operation_aborted, not a throw",
          "[http]") {
    const auto r = cancel_soon(one_get(), 1s);
    CHECK_FALSE(r.threw);
    REQUIRE(r.outcome);
    CHECK(*r.outcome == asio::error::operation_aborted);
    CHECK(r.took >= 900ms); // finished first, at the request timeout
}

// Consul applies a write whose connection closed, possibly after the next request on another
// connection: a cancelled write completes after its answer, and whatever the caller sends
// next (its undo) comes after it, here on the same connection.
TEST_CASE("a write cancelled after it was sent completes after its answer", "[http][cancel]") {
    asio::io_context ioc;
    std::vector<std::string> seen;
    std::chrono::steady_clock::time_point received;
    scripted_server server{ioc, [&](const received_request& r) {
                               seen.push_back(std::string(r.message.method_string()) + " " +
                                              std::string(r.message.target()));
                               scripted_reply reply{http_response(200, "true")};
                               if (seen.size() == 1) {
                                   received = std::chrono::steady_clock::now();
                                   reply.delay = 300ms; // the cancellation comes meanwhile
                               }
                               return reply;
                           }};
    client_config cfg;
    cfg.port = server.port();
    client c{ioc.get_executor(), cfg};
    cancel_after cancel{ioc.get_executor(), 100ms};
    std::optional<error_code> outcome;
    std::chrono::steady_clock::time_point completed;
    c.async_kv_put("k", "v", {}, cancel.bind([&](error_code ec, bool) {
        outcome = ec;
        completed = std::chrono::steady_clock::now();
        c.async_kv_delete("k", {}, [](error_code, bool) {}); // the undo
    }));
    run_until(
        ioc, [&] { return seen.size() == 2; }, 10s);
    cancel.disarm();
    REQUIRE(outcome);
    CHECK(*outcome == asio::error::operation_aborted); // never success, though applied
    CHECK(completed - received >= 300ms);              // after the answer
    CHECK(server.connections() == 1);                  // the undo reused the finished connection
    CHECK(seen.at(1).rfind("DELETE /v1/kv/k", 0) == 0);
}

// The attempt of a try_acquire whose budget is spent still gets minimum_attempt_time; a
// cancellation inside it used to come back as an empty "not acquired".
TEST_CASE("a try_acquire cancelled during its attempt completes with operation_aborted",
          "[http][lock]") {
    asio::io_context ioc;
    scripted_server server{
        ioc, [](const received_request& r) -> scripted_reply {
            const std::string target{r.message.target()};
            if (target.starts_with("/v1/session/create"))
                return {http_response(200, R"({"ID":"adf4238a-882b-9ddc-4a9d-5b6758e4159e"})")};
            if (target.starts_with("/v1/kv/"))
                return {http_response(404, "", {{"X-Consul-Index", "5"}})};
            return hang(r); // the acquire's transaction, and the cleanup's
        }};
    client_config cfg;
    cfg.port = server.port();
    cfg.request_timeout = 20s;
    client c{ioc.get_executor(), cfg};
    auto [sec, s] =
        run(ioc, session::async_create(c, session_config{}, asio::as_tuple(asio::use_awaitable)));
    REQUIRE_FALSE(sec);
    lock_options opts;
    opts.cleanup_timeout = std::chrono::milliseconds{200};
    lock l{c, "k", opts};
    cancel_after cancel{ioc.get_executor(), 200ms}; // inside the 500 ms attempt
    std::optional<error_code> outcome;
    bool acquired = false;
    l.async_try_acquire(s, std::chrono::milliseconds{0},
                        cancel.bind([&](error_code ec, std::optional<lock_lease> lease) {
                            outcome = ec;
                            acquired = lease.has_value();
                        }));
    ioc.run_for(10s);
    cancel.disarm();
    REQUIRE(outcome);
    CHECK(*outcome == asio::error::operation_aborted);
    CHECK_FALSE(acquired);
}

// CONSUL_HTTP_AUTH, as Go's client sends it: for a proxy in front of Consul.
TEST_CASE("client_config::http_auth goes out as basic authentication on every request", "[http]") {
    asio::io_context ioc;
    std::vector<std::string> seen;
    scripted_server server{ioc, [&](const received_request& r) {
                               seen.emplace_back(
                                   r.message[boost::beast::http::field::authorization]);
                               return scripted_reply{http_response(200, "true")};
                           }};
    for (const std::string auth : {"user:pa:ss", "user", ""}) {
        client_config cfg;
        cfg.port = server.port();
        cfg.http_auth = auth;
        client c{ioc.get_executor(), cfg};
        run(ioc, c.async_kv_put("k", "v", {}, asio::use_awaitable));
    }
    REQUIRE(seen.size() == 3);
    CHECK(seen[0] == "Basic dXNlcjpwYTpzcw=="); // split at the first ':' by the server
    CHECK(seen[1] == "Basic dXNlcjo=");         // a user name alone: an empty password
    CHECK(seen[2].empty());                     // none
}
