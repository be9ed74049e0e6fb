// SPDX-License-Identifier: BSL-1.0
#include "scripted_server.hpp"

#include <list>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <type_traits>
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
    explicit state(asio::io_context& ioc)
        : ex(ioc.get_executor())
        , stop_timer(ioc) {
        stop_timer.expires_at(asio::steady_timer::time_point::max());
    }
    asio::any_io_executor ex;
    std::unique_ptr<tcp::acceptor> tcp_acceptor;
    std::unique_ptr<local_stream::acceptor> unix_acceptor;
    std::string unix_path;
    asio::ssl::context* tls = nullptr; // TCP connections speak TLS when set
    responder respond;
    int connections = 0;
    int handshakes = 0;
    int handshake_failures = 0;
    std::vector<received_request> requests;
    std::list<std::function<void()>> closers;
    asio::steady_timer stop_timer; // never fires; cancelled on stop to end hangs
    bool stopped = false;
};

namespace {

using tls_stream = asio::ssl::stream<tcp::socket>;

template <class Stream>
constexpr bool is_tls = std::is_same_v<Stream, tls_stream>;

// What the TLS session says about the client: the SNI it sent and its certificate's CN.
void describe_peer(tls_stream& stream, received_request& r) {
    if (const char* sni = SSL_get_servername(stream.native_handle(), TLSEXT_NAMETYPE_host_name))
        r.server_name = sni;
    if (X509* cert = SSL_get0_peer_certificate(stream.native_handle())) {
        char cn[256] = {};
        X509_NAME* subject = X509_get_subject_name(cert);
        if (X509_NAME_get_text_by_NID(subject, NID_commonName, cn, sizeof cn) > 0)
            r.client_subject = cn;
    }
}

template <class Stream>
asio::awaitable<void> serve(std::shared_ptr<scripted_server::state> st, Stream stream, int conn) {
    auto& socket = beast::get_lowest_layer(stream);
    auto closer = st->closers.insert(st->closers.end(), [&socket] {
        boost::system::error_code ec;
        socket.close(ec);
    });
    received_request peer;
    bool ready = true;
    if constexpr (is_tls<Stream>) {
        auto [hec] = co_await stream.async_handshake(asio::ssl::stream_base::server,
                                                     asio::as_tuple(asio::use_awaitable));
        ready = !hec;
        if (hec) {
            ++st->handshake_failures;
        } else {
            ++st->handshakes;
            describe_peer(stream, peer);
        }
    }
    beast::flat_buffer buffer;
    for (int seq = 0; ready && !st->stopped; ++seq) {
        bhttp::request<bhttp::string_body> req;
        auto [ec, n] =
            co_await bhttp::async_read(stream, buffer, req, asio::as_tuple(asio::use_awaitable));
        if (ec)
            break;
        received_request r{std::move(req), conn, seq, peer.server_name, peer.client_subject};
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
        auto [wec, wn] = co_await asio::async_write(stream, asio::buffer(reply.raw),
                                                    asio::as_tuple(asio::use_awaitable));
        if (wec)
            break;
        if (reply.close_after) {
            if constexpr (is_tls<Stream>) {
                // Sends close_notify, then waits for the client's (or for it to go away).
                if (!reply.abrupt_close)
                    co_await stream.async_shutdown(asio::as_tuple(asio::use_awaitable));
            }
            break;
        }
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
        if constexpr (std::is_same_v<Acceptor, tcp::acceptor>) {
            if (st->tls != nullptr) {
                asio::co_spawn(st->ex, serve(st, tls_stream{std::move(socket), *st->tls}, conn),
                               asio::detached);
                continue;
            }
        }
        asio::co_spawn(st->ex, serve(st, std::move(socket), conn), asio::detached);
    }
}

} // namespace

scripted_server::scripted_server(asio::io_context& ioc, responder r)
    : state_(std::make_shared<state>(ioc)) {
    state_->respond = std::move(r);
    state_->tcp_acceptor =
        std::make_unique<tcp::acceptor>(ioc, tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0});
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

scripted_server::scripted_server(asio::io_context& ioc, asio::ssl::context& tls, responder r)
    : state_(std::make_shared<state>(ioc)) {
    state_->respond = std::move(r);
    state_->tls = &tls;
    state_->tcp_acceptor =
        std::make_unique<tcp::acceptor>(ioc, tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0});
    asio::co_spawn(ioc, accept_loop(state_, *state_->tcp_acceptor), asio::detached);
}

scripted_server::~scripted_server() {
    stop();
}

std::uint16_t scripted_server::port() const {
    return state_->tcp_acceptor ? state_->tcp_acceptor->local_endpoint().port() : 0;
}

int scripted_server::connections() const {
    return state_->connections;
}

int scripted_server::handshakes() const {
    return state_->handshakes;
}

int scripted_server::handshake_failures() const {
    return state_->handshake_failures;
}

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
