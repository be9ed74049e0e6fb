// SPDX-License-Identifier: BSL-1.0
// The listener: accepts connections, counts them per client (refusing those beyond
// max_conns_per_client), and starts each one's request loop (connection_loop.cpp).
#include "devagent/src/agent_impl.hpp"
#include "devagent/src/server/http_server.hpp"
#include "devagent/src/server/server_impl.hpp"
#include "devagent/src/server/server_names.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <unistd.h>

namespace conclave::dev::detail {

using namespace std::chrono_literals;

asio::awaitable<void> http_server::impl::accept_loop(std::shared_ptr<impl> self,
                                                     std::shared_ptr<agent_impl> owner) {
    for (;;) {
        auto [ec, socket] = co_await self->acceptor.async_accept(use);
        if (self->stopped || !self->acceptor.is_open())
            co_return;
        if (ec) {
            if (ec == asio::error::operation_aborted)
                co_return;
            // Out of descriptors and the like: back off a little, keep serving.
            asio::steady_timer pause(owner->ex, 50ms);
            co_await pause.async_wait(use);
            continue;
        }
        boost::system::error_code nodelay_ec;
        socket.set_option(tcp::no_delay(true), nodelay_ec);
        boost::system::error_code peer_ec;
        const auto client = socket.remote_endpoint(peer_ec).address();
        admit(self, owner, std::move(socket), client, !peer_ec);
    }
}

void http_server::impl::admit(const std::shared_ptr<impl>& self,
                              const std::shared_ptr<agent_impl>& owner, tcp::socket socket,
                              const asio::ip::address& client, bool client_known) {
    try {
        const std::size_t limit = owner->cfg.max_conns_per_client;
        self->count_out_expired();
        if (client_known && limit > 0 && self->open_per_client[client] >= limit) {
            ++owner->counters.connections_refused;
            asio::co_spawn(owner->ex, refuse(std::move(socket)), [](std::exception_ptr) {});
            return;
        }
        // Counted before serve() starts (it may run at once, and counts it out), and
        // counted out again should the spawn fail.
        ++self->open_per_client[client];
        struct uncount {
            impl& s;
            const asio::ip::address& client;
            bool spawned = false;
            ~uncount() {
                if (!spawned)
                    s.count_out(client);
            }
        } count_guard{*self, client};
        auto conn = std::make_shared<connection>(std::move(socket));
        const auto ex = owner->ex;
        asio::co_spawn(ex, serve(self, owner, std::move(conn), client), [](std::exception_ptr) {
            // A failing connection only ends itself.
        });
        count_guard.spawned = true;
        ++owner->counters.connections_accepted;
    } catch (const std::exception&) {
        // (Out of memory, say: this connection is dropped, the agent keeps accepting.)
        ++owner->counters.internal_errors;
    }
}

asio::awaitable<void> http_server::impl::refuse(tcp::socket socket) {
    // Consul's bytes (go-connlimit's HTTP answer), written before reading anything. They fit
    // any socket buffer: the write does not wait for the client.
    static constexpr std::string_view too_many =
        "HTTP/1.1 429 Too Many Requests\r\n"
        "Content-Type: text/plain\r\n"
        "Content-Length: 81\r\n"
        "Connection: close\r\n"
        "\r\n"
        "Your IP is issuing too many concurrent connections, please rate limit your calls\n";
    co_await asio::async_write(socket, asio::buffer(too_many), use);
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
}

http_server::http_server(agent_impl& agent)
    : p_(std::make_shared<impl>(agent)) {}

http_server::~http_server() {
    stop();
}

void http_server::start(const std::string& address, std::uint16_t port) {
    const tcp::endpoint ep(asio::ip::make_address(address), port);
    p_->acceptor.open(ep.protocol());
    p_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    p_->acceptor.bind(ep);
    p_->acceptor.listen(asio::socket_base::max_listen_connections);
    p_->port = p_->acceptor.local_endpoint().port();
    auto owner = p_->agent.shared_from_this();
    const auto ex = p_->agent.ex;
    asio::co_spawn(ex, impl::accept_loop(p_, std::move(owner)), [](std::exception_ptr) {});
}

void http_server::stop() {
    if (p_->stopped)
        return;
    p_->stopped = true;
    boost::system::error_code ec;
    p_->acceptor.close(ec);
    for (connection* c : p_->connections) {
        c->socket().shutdown(tcp::socket::shutdown_both, ec);
        c->socket().close(ec);
    }
}

std::uint16_t http_server::port() const {
    return p_->port;
}

void http_server::set_hooks(server_hooks hooks) {
    p_->hooks = std::move(hooks);
}

void http_server::adopt(int descriptor, const std::string& client_address) {
    tcp::socket socket(p_->agent.ex);
    boost::system::error_code ec;
    socket.assign(tcp::v4(), descriptor, ec);
    if (ec) {
        ::close(descriptor);
        return;
    }
    if (p_->stopped)
        return; // (closed with the socket)
    const auto owner = p_->agent.shared_from_this();
    impl::admit(p_, owner, std::move(socket), asio::ip::make_address(client_address), true);
}

} // namespace conclave::dev::detail
