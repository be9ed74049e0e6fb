// SPDX-License-Identifier: BSL-1.0
// A leader-elected service: every instance campaigns; the leader publishes its address and
// does the leader-only work, which is cancelled the moment leadership is lost; everyone
// follows who leads.
//
//   leader_service --dev                 two instances on an embedded agent: one leads,
//                                        resigns after a while, the other takes over
//   leader_service <host:port>           one instance against CONSUL_HTTP_ADDR
//
// Ctrl+C: the leader task is cancelled, then the key released (the next leader takes over
// at once instead of after the session expires), then the session destroyed.
#include "example_main.hpp"

#include <conclave/elector.hpp>
#include <conclave/session.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <string>
#include <variant>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

namespace {

const std::string leader_key = "service/example/leader";

asio::awaitable<void> sleep(std::chrono::milliseconds d) {
    asio::steady_timer t{co_await asio::this_coro::executor, d};
    co_await t.async_wait(asio::use_awaitable);
}

// The leader-only work: runs until cancelled (leadership lost, resign, Ctrl+C).
conclave::leader_task leader_work(std::string name) {
    return [name](conclave::leadership l) -> asio::awaitable<void> {
        std::printf("%s: leading (term %s)\n", name.c_str(), l.token().to_string().c_str());
        try {
            for (int tick = 0;; ++tick) {
                // Real work would pass l.token() to its stores, or write through
                // l.lease().async_guarded_txn, so that a deposed leader is refused.
                co_await sleep(200ms);
            }
        } catch (const boost::system::system_error&) {
            std::printf("%s: no longer leading\n", name.c_str());
            throw;
        }
    };
}

// Errors as values: with_diagnostics(as_tuple(...)) hands an operation's failure over as an
// exception_ptr (a conclave::error with Consul's own words) instead of throwing it. Asio's
// `a || b` ends with the first operand that *succeeds*: one that ends by throwing would
// leave the other running.
constexpr auto as_value = conclave::with_diagnostics(asio::as_tuple(asio::use_awaitable));

// One instance: campaigns for as long as its session lives. It ends only with a failure
// (no session, the session lost, the campaign refused, or Ctrl+C's operation_aborted),
// returned.
asio::awaitable<std::exception_ptr> instance(conclave::client& consul, std::string address) {
    auto [failed, s] = co_await conclave::session::async_create(
        consul, conclave::session_config{}.with_name("leader-service").with_ttl(10s), as_value);
    if (failed)
        co_return failed;
    conclave::elector el{consul, leader_key, conclave::elector_options{}.with_value(address)};
    auto ended =
        co_await (s.async_run(as_value) || el.async_run(s, leader_work(address), as_value));
    co_return std::visit([](const auto& r) { return std::get<0>(r); }, ended);
}

// Prints each change of leader, including "no leader".
asio::awaitable<void> follow(conclave::client& consul) {
    conclave::elector el{consul, leader_key};
    auto changes = el.observe();
    for (;;) {
        auto leader = co_await changes.async_next();
        std::printf("observer: %s\n",
                    leader ? ("leader is " + leader->value).c_str() : "no leader");
    }
}

// --dev: two instances; the first resigns after a second, the second takes over.
asio::awaitable<void> demo(conclave::client& consul) {
    auto a_session = co_await conclave::session::async_create(consul);
    auto b_session = co_await conclave::session::async_create(consul);
    conclave::elector a{consul, leader_key, conclave::elector_options{}.with_value("10.0.0.1:80")};
    conclave::elector b{consul, leader_key, conclave::elector_options{}.with_value("10.0.0.2:80")};
    auto script = [&]() -> asio::awaitable<void> {
        co_await sleep(1s);
        std::printf("10.0.0.1:80 resigns\n");
        co_await a.async_resign();
        co_await sleep(1s);
    };
    co_await (a.async_run(a_session, leader_work("10.0.0.1:80"), asio::use_awaitable) ||
              b.async_run(b_session, leader_work("10.0.0.2:80"), asio::use_awaitable) ||
              follow(consul) || script());
    co_await a_session.async_destroy();
    co_await b_session.async_destroy();
    conclave::lock cleanup{consul, leader_key};
    co_await cleanup.async_destroy();
}

} // namespace

int main(int argc, char** argv) {
    return examples::run_example(
        "leader_service", argc, argv,
        [argc, argv](conclave::client& consul, bool dev) -> asio::awaitable<void> {
            if (dev)
                co_return co_await demo(consul);
            const std::string address = argc > 1 ? argv[1] : "127.0.0.1:8080";
            // Following never ends by itself: the instance's end ends both.
            auto ended = co_await (instance(consul, address) || follow(consul));
            std::rethrow_exception(std::get<0>(ended));
        });
}
