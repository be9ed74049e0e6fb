// SPDX-License-Identifier: BSL-1.0
// A leader-elected service: every instance campaigns; the leader publishes its address and
// does the leader-only work, which is cancelled the moment leadership is lost; everyone
// follows who leads. An instance whose session is lost (Consul restarted empty, the process
// paused past its TTL) campaigns again with a new one.
//
//   leader_service --dev                 two instances on an embedded agent: each leads for
//                                        a second, then retires; the other takes over
//   leader_service <host:port>           one instance against CONSUL_HTTP_ADDR
//
// Ctrl+C: the leader task is cancelled, then the key released (the next leader takes over
// at once instead of after the session expires), then the session destroyed.
#include "example_main.hpp"

#include <conclave/elector.hpp>
#include <conclave/lock.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

namespace {

const std::string leader_key = "service/example/leader";

// The leader-only work: runs until cancelled (leadership lost, Ctrl+C). Real work would
// pass term.token() to its stores, or write through term.lease().async_guarded_txn, so
// that a deposed leader is refused.
conclave::leader_task leader_work(std::string name) {
    return [name](conclave::leadership term) -> asio::awaitable<void> {
        std::printf("%s: leading (term %s)\n", name.c_str(), term.token().to_string().c_str());
        try {
            asio::steady_timer tick{co_await asio::this_coro::executor};
            for (;;) {
                tick.expires_after(200ms);
                co_await tick.async_wait(asio::use_awaitable);
            }
        } catch (const boost::system::system_error&) {
            std::printf("%s: no longer leading\n", name.c_str());
            throw;
        }
    };
}

// One instance: campaigns with a session of its own, and with a new one after each loss,
// until cancelled or refused for good (ACLs, a key that is not a lock).
asio::awaitable<void> campaign(conclave::client& consul, std::string address,
                               conclave::leader_task task) {
    conclave::elector el{consul, leader_key, conclave::elector_options{}.with_value(address)};
    co_await el.async_run(conclave::session_config{}.with_name("leader-service").with_ttl(10s),
                          std::move(task));
}

// Prints each change of leader, including "no leader". With `retirements`, returns once
// that many leaders have been seen and nobody leads.
asio::awaitable<void> follow(conclave::client& consul, int retirements = -1) {
    conclave::elector el{consul, leader_key};
    auto changes = el.observe();
    std::string last;
    for (int seen = 0;;) {
        auto leader = co_await changes.async_next();
        std::printf("observer: %s\n",
                    leader ? ("leader is " + leader->value).c_str() : "no leader");
        if (leader && leader->value != last) {
            last = leader->value;
            ++seen;
        }
        if (!leader && seen == retirements)
            co_return;
    }
}

// --dev: a leader that retires after a second. Its task throws, which ends its campaign
// once the key is released (elector::async_run rethrows the task's exception): the other
// instance, campaigning meanwhile, takes over at once.
struct retired : std::exception {};

asio::awaitable<void> retiring_instance(conclave::client& consul, std::string address) {
    auto lead_then_retire = [address](conclave::leadership term) -> asio::awaitable<void> {
        std::printf("%s: leading (term %s)\n", address.c_str(), term.token().to_string().c_str());
        asio::steady_timer term_length{co_await asio::this_coro::executor, 1s};
        co_await term_length.async_wait(asio::use_awaitable);
        std::printf("%s: retires\n", address.c_str());
        throw retired{};
    };
    try {
        co_await campaign(consul, address, lead_then_retire);
    } catch (const retired&) {
    }
}

asio::awaitable<void> demo(conclave::client& consul) {
    co_await (retiring_instance(consul, "10.0.0.1:80") &&
              retiring_instance(consul, "10.0.0.2:80") && follow(consul, 2));
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
            // Side by side; following never ends by itself, the campaign's failure (or
            // Ctrl+C) ends both.
            co_await (campaign(consul, address, leader_work(address)) && follow(consul));
        });
}
