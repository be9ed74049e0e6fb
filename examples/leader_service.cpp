// SPDX-License-Identifier: BSL-1.0
// A leader-elected service: every instance campaigns; the leader publishes its address and
// does the leader-only work, which is cancelled the moment leadership is lost; everyone
// follows who leads. An instance whose session is lost (Consul restarted empty, the process
// paused past its TTL) campaigns again with a new one.
//
//   leader_service --dev                 two instances on an embedded agent: the first
//                                        leader's node fails, the other takes over, then
//                                        steps down; the first, back, leads again
//   leader_service <host:port>           one instance against CONSUL_HTTP_ADDR
//
// Ctrl+C: the leader task is cancelled, then the key released (the next leader takes over
// at once instead of after the session expires), then the session destroyed.
#include "example_main.hpp"

#include <conclave/elector.hpp>
#include <conclave/lock.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
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
        std::printf("%s: leading (fencing token %llu)\n", name.c_str(),
                    static_cast<unsigned long long>(term.token().modify_index));
        try {
            for (;;)
                co_await examples::pause(200ms);
        } catch (const boost::system::system_error&) {
            std::printf("%s: no longer leading\n", name.c_str());
            throw;
        }
    };
}

// One instance: campaigns with a session of its own, and with a new one after each loss,
// until cancelled or refused for good (ACLs, a key that is not a lock). After a leader's
// session is lost, the key stays out of reach for the lock-delay (Consul's default 15 s:
// time for a leader that paused past its TTL to notice it no longer leads).
asio::awaitable<void> campaign(conclave::elector& el, std::string address,
                               std::chrono::milliseconds lock_delay = 15s) {
    co_await el.async_run(conclave::session_config{}
                              .with_name("leader-service")
                              .with_ttl(10s)
                              .with_lock_delay(lock_delay),
                          leader_work(address));
}

conclave::elector instance(conclave::client& consul, std::string address) {
    return conclave::elector{consul, leader_key,
                             conclave::elector_options{}.with_value(std::move(address))};
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

// --dev: two instances. The first leader's node fails (its session destroyed, as Consul does
// then): its task is cancelled and the other instance leads once the lock-delay (1 s here)
// has passed. That one steps down (async_resign): the first, campaigning again with a new
// session, takes over at once. Each term's fencing token is larger than the one before.
asio::awaitable<void> handovers(conclave::client& consul, conclave::elector& a,
                                conclave::elector& b) {
    auto changes = a.observe();
    std::uint64_t last = 0;
    std::string first;
    for (int term = 1; term <= 3;) {
        auto leader = co_await changes.async_next();
        if (!leader || leader->modify_index == last)
            continue;
        if (leader->modify_index < last)
            throw std::runtime_error("a new term with a smaller fencing token");
        last = leader->modify_index;
        if (term == 1)
            first = leader->value;
        else if ((term == 2) == (leader->value == first)) // the other one, then the first
            throw std::runtime_error("an unexpected leader: " + leader->value);
        co_await examples::pause(1s);
        if (term == 1) {
            std::printf("-- %s's node fails: Consul drops its session\n", leader->value.c_str());
            co_await consul.async_session_destroy(leader->session);
        } else if (term == 2) {
            std::printf("-- %s steps down\n", leader->value.c_str());
            co_await (a.is_leader() ? a : b).async_resign();
        } else {
            std::printf("-- both stop\n");
        }
        ++term;
    }
}

asio::awaitable<void> demo(conclave::client& consul) {
    auto a = instance(consul, "10.0.0.1:80");
    auto b = instance(consul, "10.0.0.2:80");
    // Until the scenario ends (or anything fails first): the campaigns are then cancelled,
    // and each releases the key, if it leads, and destroys its session.
    auto ex = co_await asio::this_coro::executor;
    auto [order, ea, eb, es] =
        co_await asio::experimental::make_parallel_group(
            asio::co_spawn(ex, campaign(a, "10.0.0.1:80", 1s), asio::deferred),
            asio::co_spawn(ex, campaign(b, "10.0.0.2:80", 1s), asio::deferred),
            asio::co_spawn(ex, handovers(consul, a, b), asio::deferred))
            .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
    const std::exception_ptr first[] = {ea, eb, es};
    if (first[order[0]])
        std::rethrow_exception(first[order[0]]);
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
            auto el = instance(consul, address);
            // Side by side; following never ends by itself, the campaign's failure (or
            // Ctrl+C) ends both.
            co_await (campaign(el, address) && follow(consul));
        });
}
