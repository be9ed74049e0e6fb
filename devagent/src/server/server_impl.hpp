// SPDX-License-Identifier: BSL-1.0
// What the HTTP server holds (http_server::impl): the listener, the open connections and
// their counts per client, the request memory they share. Its accept loop is in
// http_server.cpp, a connection's request loop (serve) in connection_loop.cpp.
#pragma once

#include "devagent/src/agent_impl.hpp"
#include "devagent/src/server/connection.hpp"
#include "devagent/src/server/http_server.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_set>

namespace conclave::dev::detail {

struct http_server::impl : std::enable_shared_from_this<http_server::impl> {
    explicit impl(agent_impl& a)
        : agent(a)
        , acceptor(a.ex) {}

    agent_impl& agent;
    boost::asio::ip::tcp::acceptor acceptor;
    std::unordered_set<connection*> connections;
    std::map<boost::asio::ip::address, std::size_t> open_per_client; // (max_conns_per_client)
    std::multimap<std::chrono::steady_clock::time_point, boost::asio::ip::address> counted_until;
    std::uint16_t port = 0;
    bool stopped = false;
    server_hooks hooks; ///< (the fuzzer's; unset otherwise)
    /// What connections hold of the requests they read beyond free_request_bytes each
    /// (agent_config::request_memory_limit; see memory_lease).
    std::size_t request_memory = 0;

    static boost::asio::awaitable<void> accept_loop(std::shared_ptr<impl> self,
                                                    std::shared_ptr<agent_impl> owner);
    /// Serves an accepted connection of `client`, or refuses it (max_conns_per_client; not
    /// applied when the client's address is unknown).
    static void admit(const std::shared_ptr<impl>& self, const std::shared_ptr<agent_impl>& owner,
                      boost::asio::ip::tcp::socket socket, const boost::asio::ip::address& client,
                      bool client_known);
    /// Consul's answer to a connection beyond max_conns_per_client: a 429, then close.
    static boost::asio::awaitable<void> refuse(boost::asio::ip::tcp::socket socket);
    /// A connection of `client` no longer counts against max_conns_per_client.
    void count_out(const boost::asio::ip::address& client) {
        if (--open_per_client[client] == 0)
            open_per_client.erase(client);
    }
    /// Counts out, when it comes, the connections whose count outlives them (see
    /// disconnect_probe::counted_until). Only an accept needs the counts: no timer.
    void count_out_expired() {
        const auto now = std::chrono::steady_clock::now();
        while (!counted_until.empty() && counted_until.begin()->first <= now) {
            count_out(counted_until.begin()->second);
            counted_until.erase(counted_until.begin());
        }
    }
    static boost::asio::awaitable<void> serve(std::shared_ptr<impl> self,
                                              std::shared_ptr<agent_impl> owner,
                                              std::shared_ptr<connection> conn,
                                              boost::asio::ip::address client);
};

} // namespace conclave::dev::detail
