// The dev agent's HTTP/1.1 server (Beast): accept loop, keep-alive connections, request
// size limits and the protocol-level errors Go's net/http sends. Beast stays inside
// http_server.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace conclave::dev::detail {

class agent_impl;

class http_server {
public:
    explicit http_server(agent_impl& agent);
    ~http_server();
    http_server(const http_server&) = delete;
    http_server& operator=(const http_server&) = delete;

    /// Binds and starts the accept loop. Throws boost::system::system_error.
    void start(const std::string& address, std::uint16_t port);
    /// Closes the listener and every open connection.
    void stop();
    std::uint16_t port() const;

private:
    struct impl;
    std::shared_ptr<impl> p_;
};

} // namespace conclave::dev::detail
