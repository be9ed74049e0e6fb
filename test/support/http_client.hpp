// SPDX-License-Identifier: BSL-1.0
// A tiny coroutine HTTP/1.1 client for the dev agent tests (the library's client is not
// used here on purpose: these tests pin the wire behaviour). Beast stays in the .cpp.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace conclave::test {

struct http_reply {
    boost::system::error_code ec; ///< transport failure (then status is 0)
    unsigned status = 0;
    std::map<std::string, std::string> headers; ///< names lower-cased
    std::string body;
    std::chrono::steady_clock::duration elapsed{};

    bool has(const std::string& name) const { return headers.count(name) != 0; }
    std::string header(const std::string& name) const;
    /// X-Consul-Index as a number (0 when absent).
    std::uint64_t index() const;
    boost::json::value json() const;
};

/// One keep-alive connection to 127.0.0.1:port.
class http_conn {
public:
    http_conn(boost::asio::any_io_executor ex, std::uint16_t port);
    ~http_conn();

    boost::asio::awaitable<boost::system::error_code> connect();
    /// Sends one request and reads its response on this connection.
    boost::asio::awaitable<http_reply> request(std::string method, std::string target,
                                               std::optional<std::string> body = std::nullopt,
                                               std::map<std::string, std::string> headers = {});
    /// (A string-literal body must not reach the coroutine as an array reference: g++ 12
    /// cannot copy it into the coroutine frame.)
    boost::asio::awaitable<http_reply> request(std::string method, std::string target,
                                               const char* body) {
        return request(std::move(method), std::move(target), std::optional<std::string>(body));
    }
    /// Writes raw bytes.
    boost::asio::awaitable<boost::system::error_code> send_raw(std::string bytes);
    /// Reads until the server closes the connection (or `limit` passes); returns the bytes.
    boost::asio::awaitable<std::string>
    read_until_close(std::chrono::milliseconds limit = std::chrono::milliseconds(5000));
    void close();

private:
    struct impl;
    std::unique_ptr<impl> p_;
};

/// One request on a fresh connection.
boost::asio::awaitable<http_reply> http(std::uint16_t port, std::string method, std::string target,
                                        std::optional<std::string> body = std::nullopt);

inline boost::asio::awaitable<http_reply> http(std::uint16_t port, std::string method,
                                               std::string target, const char* body) {
    return http(port, std::move(method), std::move(target), std::optional<std::string>(body));
}

/// Waits (a timer; only for timing tests).
boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d);

} // namespace conclave::test
