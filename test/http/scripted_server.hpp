// SPDX-License-Identifier: BSL-1.0
// A tiny HTTP server for fault tests: each request is answered by a test-supplied
// function that says what bytes to send back, whether to close, or to hang. It listens on
// TCP, on a unix socket, or on TCP with TLS.
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace conclave::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

struct received_request {
    bhttp::request<bhttp::string_body> message;
    int connection = 0;         ///< 0-based connection number
    int sequence = 0;           ///< 0-based request number on that connection
    std::string server_name;    ///< TLS: the SNI host name the client sent (empty: none)
    std::string client_subject; ///< TLS: CN of the client certificate (empty: none)
};

struct scripted_reply {
    std::string raw;          ///< bytes written back (may be a partial response)
    bool close_after = false; ///< close the connection after writing
    bool hang = false;        ///< write nothing, keep the connection open until stopped
    std::chrono::milliseconds delay{0};
    /// TLS: with close_after, drop the TCP connection without sending close_notify (as a
    /// crashed server or a middlebox would); otherwise the server sends close_notify first.
    bool abrupt_close = false;
};

/// A complete HTTP/1.1 response.
std::string http_response(unsigned status, std::string body,
                          std::vector<std::pair<std::string, std::string>> headers = {},
                          bool keep_alive = true);

class scripted_server {
public:
    using responder = std::function<scripted_reply(const received_request&)>;

    scripted_server(asio::io_context& ioc, responder r);
    /// Listens on a unix socket instead of TCP.
    scripted_server(asio::io_context& ioc, std::string unix_path, responder r);
    /// Listens on TCP and speaks TLS: each connection does a server handshake with `tls`
    /// (which must outlive the server), then the same request/reply loop.
    scripted_server(asio::io_context& ioc, asio::ssl::context& tls, responder r);
    ~scripted_server();

    std::uint16_t port() const;
    /// Connections accepted (TLS: whether or not the handshake succeeded).
    int connections() const;
    /// TLS handshakes that succeeded on the server side.
    int handshakes() const;
    /// TLS handshakes that failed on the server side.
    int handshake_failures() const;
    const std::vector<received_request>& requests() const;
    /// Closes the listener and every connection.
    void stop();

    struct state;

private:
    std::shared_ptr<state> state_;
};

} // namespace conclave::test
