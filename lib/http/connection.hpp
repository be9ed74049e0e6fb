// SPDX-License-Identifier: BSL-1.0
// One HTTP/1.1 connection to Consul over TCP, TLS or a unix socket.
#pragma once

#include "http/request.hpp"
#include "http/response_parser.hpp"

#include <conclave/config.hpp>
#include <conclave/error.hpp>
#include <conclave/observer.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <memory>
#include <utility>

namespace conclave::detail::http {

namespace asio = boost::asio;

using clock = std::chrono::steady_clock;

/// A keep-alive connection. Not copyable; the pool hands it to one request at a time.
class connection {
public:
    virtual ~connection() {
        if (observer_) {
            try {
                observer_->connection_closed();
            } catch (...) { // (an observer must not throw; a destructor cannot let it)
            }
        }
    }

    /// Reports the connection open to `o` now, and closed when it is destroyed.
    void report_to(std::shared_ptr<conclave::observer> o) noexcept {
        if (!o)
            return;
        try {
            o->connection_opened();
        } catch (...) {
            return; // (an observer must not throw; one that did is not told of the close)
        }
        observer_ = std::move(o);
    }

    /// Writes `req` and reads the response into `res`, all within `timeout`. Any error
    /// leaves the connection unusable (the caller discards it).
    ///
    /// `finish_once_sent`: the caller's cancellation does not reach the exchange; it ends
    /// with the response (or the timeout) and the caller checks for cancellation after it.
    /// For writes: Consul applies a request whose connection was closed, possibly after a
    /// later request on another connection, so a write must not be abandoned half-way.
    virtual asio::awaitable<error_code> exchange(const request& req, response& res,
                                                 clock::duration timeout, std::size_t body_limit,
                                                 bool finish_once_sent) = 0;

    /// True until a response asked to close the connection or an exchange failed.
    bool reusable() const noexcept { return reusable_; }
    /// True once an exchange on it completed. One that never did may have gone stale
    /// unseen only if it sat idle, and may hold a refusal Consul wrote on accepting it.
    bool answered() const noexcept { return answered_; }
    /// For an idle connection: true when the server has closed it (or sent anything, which
    /// an idle HTTP/1.1 connection never gets but a close: TLS close_notify). One
    /// non-blocking peek at the socket.
    virtual bool closed_by_peer() = 0;
    /// When it went back to the pool (idle connections expire).
    clock::time_point idle_since{};

protected:
    std::shared_ptr<conclave::observer> observer_;
    bool reusable_ = true;
    bool answered_ = false;
};

/// Builds the TLS context a client uses (CA, client certificate, verification).
/// Throws boost::system::system_error on unreadable files.
std::shared_ptr<asio::ssl::context> make_tls_context(const tls_config& tls);

/// Opens a connection as `cfg` says (TCP, TLS over TCP, unix socket), within `timeout`.
/// `tls` must be non-null when cfg.tls.enabled.
asio::awaitable<std::pair<error_code, std::unique_ptr<connection>>>
open_connection(asio::any_io_executor ex, const client_config& cfg,
                std::shared_ptr<asio::ssl::context> tls, clock::duration timeout);

} // namespace conclave::detail::http
