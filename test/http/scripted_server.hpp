// A tiny HTTP server for fault tests: each request is answered by a test-supplied
// function that says what bytes to send back, whether to close, or to hang.
#pragma once

#include <boost/asio.hpp>
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
    int connection = 0; ///< 0-based connection number
    int sequence = 0;   ///< 0-based request number on that connection
};

struct scripted_reply {
    std::string raw;          ///< bytes written back (may be a partial response)
    bool close_after = false; ///< close the connection after writing
    bool hang = false;        ///< write nothing, keep the connection open until stopped
    std::chrono::milliseconds delay{0};
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
    ~scripted_server();

    std::uint16_t port() const;
    int connections() const;
    const std::vector<received_request>& requests() const;
    /// Closes the listener and every connection.
    void stop();

    struct state;

private:
    std::shared_ptr<state> state_;
};

} // namespace conclave::test
