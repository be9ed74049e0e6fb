// SPDX-License-Identifier: BSL-1.0
// The dev agent's HTTP/1.1 server (Beast): accept loop, keep-alive connections, request
// size limits and the protocol-level errors Go's net/http sends. Beast stays inside the
// server's own files: http_server.cpp (the listener), connection_loop.cpp (a connection's
// requests), request_reader.* and response_writer.* (reading and answering one),
// connection.hpp (the stream and its deadlines).
#pragma once

#include "devagent/src/server/http_types.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace conclave::dev::detail {

class agent_impl;

/// A seam for fuzz/fuzz_agent_request.cpp only (the server's users have no use for it):
/// on_request is given each request once it is read (head and body), before it is routed,
/// and may change it (the fuzzer fills in session IDs and indexes it could not guess);
/// on_answer sees each route's answer, before it is written. Unset, each costs a test.
struct server_hooks {
    std::function<void(http_request&)> on_request;
    std::function<void(const http_request&, const http_response&)> on_answer;
};

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
    /// From now on, for every connection (see server_hooks).
    void set_hooks(server_hooks hooks);
    /// For the fuzzer too: serves a connected stream socket (taking the descriptor) as the
    /// accept loop serves one accepted from `client_address`: the same per-client count and
    /// refusal, then the same connection code. The fuzzer hands it one end of a socketpair,
    /// which delivers each of its writes when made (loopback TCP merged small ones). The
    /// socket is typed TCP but may be another family: the connection code must not ask it
    /// for endpoints or TCP options. Once stopped, the descriptor is only closed.
    void adopt(int descriptor, const std::string& client_address);

private:
    struct impl;
    std::shared_ptr<impl> p_;
};

/// Appends the head of an answer to `out`: the bytes Beast writes for the message the
/// server used to build (the route's headers, Date, Content-Length of the body, then
/// "Connection: close" when not keeping the connection alive, and "Connection: keep-alive"
/// for an HTTP/1.0 client that asked for it), without building Beast's field list (one
/// allocation per field). False, with nothing appended, when the answer has more headers
/// than it handles; build the Beast message then.
bool append_response_head(std::string& out, const http_response& r, bool keep_alive,
                          bool http10_keep_alive, std::string_view date);

} // namespace conclave::dev::detail
