// SPDX-License-Identifier: BSL-1.0
// The client without the recipes: a session, a lock taken with Go api.Lock's layout, a
// blocking read, each one request of Consul's HTTP API. No renewals, no lost signal, no
// retries: conclave::lock and the hold scopes (conclave/hold_scope.hpp) add those. Run it
// against any Consul (CONSUL_HTTP_ADDR), e.g. `conclave agent -dev`.
#include <conclave/client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdio>
#include <exception>

namespace asio = boost::asio;
using namespace std::chrono_literals;

asio::awaitable<void> take_the_lock(conclave::client& consul) {
    auto session = co_await consul.async_session_create(
        conclave::session_options{}.with_ttl(10s).with_lock_delay(1s).without_node_checks());

    // Go api.Lock's layout: same key, same flags, so Go services contend for it too.
    bool held = co_await consul.async_kv_put(
        "service/billing/leader", "node-a:8080",
        conclave::kv_put_options{}.with_acquire(session).with_flags(conclave::lock_flag_value));
    std::printf("acquired: %s\n", held ? "yes" : "no");

    // A read, then a blocking read from its index: Consul answers when the key changes
    // (nobody changes it here), or after the wait, 1 s.
    auto r = co_await consul.async_kv_get("service/billing/leader");
    r = co_await consul.async_kv_get("service/billing/leader",
                                     conclave::query_options::blocking(r.meta.index, 1s));
    if (r.entry)
        std::printf("held by %s, LockIndex %llu\n", r.entry->session.c_str(),
                    static_cast<unsigned long long>(r.entry->lock_index));
    co_await consul.async_session_destroy(session);
}

int main() {
    asio::io_context ioc;
    conclave::client consul{ioc.get_executor(), conclave::config_from_env()};
    int status = 0;
    asio::co_spawn(ioc, take_the_lock(consul), [&](std::exception_ptr e) {
        if (!e)
            return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            std::fprintf(stderr, "raw_lock: %s\n", ex.what());
            status = 1;
        }
    });
    ioc.run();
    return status;
}
