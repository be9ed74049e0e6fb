#include "scripted_server.hpp"

#include <list>

#include <unistd.h>

namespace conclave::test {

using asio::ip::tcp;
using local_stream = asio::local::stream_protocol;

std::string http_response(unsigned status, std::string body,
                          std::vector<std::pair<std::string, std::string>> headers,
                          bool keep_alive) {
    std::string out = "HTTP/1.1 " + std::to_string(status) + " " +
                      std::string(bhttp::obsolete_reason(bhttp::int_to_status(status))) + "\r\n";
    for (const auto& [name, value] : headers)
        out += name + ": " + value + "\r\n";
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    if (!keep_alive)
        out += "Connection: close\r\n";
    out += "\r\n" + body;
    return out;
}

struct scripted_server::state {
    explicit state(asio::io_context& ioc) : ex(ioc.get_executor()), stop_timer(ioc) {
        stop_timer.expires_at(asio::steady_timer::time_point::max());
    }
    asio::any_io_executor ex;
    std::unique_ptr<tcp::acceptor> tcp_acceptor;
    std::unique_ptr<local_stream::acceptor> unix_acceptor;
    std::string unix_path;
    responder respond;
    int connections = 0;
    std::vector<received_request> requests;
    std::list<std::function<void()>> closers;
    asio::steady_timer stop_timer; // never fires; cancelled on stop to end hangs
    bool stopped = false;
};

namespace {

template <class Socket>
asio::awaitable<void> serve(std::shared_ptr<scripted_server::state> st, Socket socket, int conn) {
    auto closer = st->closers.insert(st->closers.end(), [&socket] {
        boost::system::error_code ec;
        socket.close(ec);
    });
    beast::flat_buffer buffer;
    for (int seq = 0; !st->stopped; ++seq) {
        bhttp::request<bhttp::string_body> req;
        auto [ec, n] =
            co_await bhttp::async_read(socket, buffer, req, asio::as_tuple(asio::use_awaitable));
        if (ec)
            break;
        received_request r{std::move(req), conn, seq};
        st->requests.push_back(r);
        scripted_reply reply = st->respond(r);
        if (reply.delay.count() > 0) {
            asio::steady_timer t{st->ex, reply.delay};
            co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
        }
        if (reply.hang) {
            co_await st->stop_timer.async_wait(asio::as_tuple(asio::use_awaitable));
            break;
        }
        auto [wec, wn] = co_await asio::async_write(socket, asio::buffer(reply.raw),
                                                    asio::as_tuple(asio::use_awaitable));
        if (wec || reply.close_after)
            break;
    }
    st->closers.erase(closer);
    boost::system::error_code ignored;
    socket.close(ignored);
}

template <class Acceptor>
asio::awaitable<void> accept_loop(std::shared_ptr<scripted_server::state> st, Acceptor& acc) {
    for (;;) {
        auto [ec, socket] = co_await acc.async_accept(asio::as_tuple(asio::use_awaitable));
        if (ec)
            co_return;
        const int conn = st->connections++;
        asio::co_spawn(st->ex, serve(st, std::move(socket), conn), asio::detached);
    }
}

} // namespace

scripted_server::scripted_server(asio::io_context& ioc, responder r)
    : state_(std::make_shared<state>(ioc)) {
    state_->respond = std::move(r);
    state_->tcp_acceptor = std::make_unique<tcp::acceptor>(
        ioc, tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0});
    asio::co_spawn(ioc, accept_loop(state_, *state_->tcp_acceptor), asio::detached);
}

scripted_server::scripted_server(asio::io_context& ioc, std::string unix_path, responder r)
    : state_(std::make_shared<state>(ioc)) {
    state_->respond = std::move(r);
    ::unlink(unix_path.c_str());
    state_->unix_path = unix_path;
    state_->unix_acceptor =
        std::make_unique<local_stream::acceptor>(ioc, local_stream::endpoint{unix_path});
    asio::co_spawn(ioc, accept_loop(state_, *state_->unix_acceptor), asio::detached);
}

scripted_server::~scripted_server() { stop(); }

std::uint16_t scripted_server::port() const {
    return state_->tcp_acceptor ? state_->tcp_acceptor->local_endpoint().port() : 0;
}

int scripted_server::connections() const { return state_->connections; }

const std::vector<received_request>& scripted_server::requests() const {
    return state_->requests;
}

void scripted_server::stop() {
    if (state_->stopped)
        return;
    state_->stopped = true;
    boost::system::error_code ec;
    if (state_->tcp_acceptor)
        state_->tcp_acceptor->close(ec);
    if (state_->unix_acceptor) {
        state_->unix_acceptor->close(ec);
        ::unlink(state_->unix_path.c_str());
    }
    state_->stop_timer.cancel();
    for (auto& close : state_->closers)
        close();
}

} // namespace conclave::test
