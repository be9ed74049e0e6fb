// SPDX-License-Identifier: BSL-1.0
#include <conclave/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

namespace conclave {

namespace {

class conclave_category final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "conclave"; }

    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
        case errc::timeout:
            return "operation timed out";
        case errc::session_invalidated:
            return "session invalidated (Consul no longer knows it)";
        case errc::session_expired:
            return "session expired: no renewal reached Consul within its TTL";
        case errc::lock_lost:
            return "lock lost";
        case errc::conflict:
            return "existing key does not match this recipe's use (flags or layout differ)";
        case errc::limit_conflict:
            return "semaphore limit conflict";
        case errc::lock_delay:
            return "key is inside its lock-delay";
        case errc::bad_request:
            return "Consul rejected the request (HTTP 400)";
        case errc::permission_denied:
            return "permission denied (HTTP 403)";
        case errc::not_found:
            return "not found (HTTP 404)";
        case errc::request_too_large:
            return "request too large (HTTP 413)";
        case errc::rate_limited:
            return "rate limited (HTTP 429)";
        case errc::server_error:
            return "Consul server error (HTTP 500)";
        case errc::unavailable:
            return "Consul unavailable (HTTP 502/503/504)";
        case errc::unexpected_status:
            return "unexpected HTTP status";
        case errc::bad_response:
            return "malformed response from Consul";
        case errc::invalid_argument:
            return "invalid argument";
        case errc::invalid_config:
            return "invalid client configuration";
        case errc::pool_closed:
            return "client closed";
        case errc::task_failed:
            return "the task run by the recipe ended with an exception";
        case errc::check_critical:
            return "a health check the session is bound to is critical or not registered";
        case errc::session_handed_over:
            return "the session was handed over to a successor process";
        }
        return "unknown conclave error";
    }
};

} // namespace

const boost::system::error_category& category() noexcept {
    static const conclave_category instance;
    return instance;
}

namespace {

std::string describe(const error_code& ec, const diagnostics& d) {
    std::string out = ec.message();
    std::string_view server = d.server_message;
    while (!server.empty() &&
           (server.back() == '\n' || server.back() == '\r' || server.back() == ' '))
        server.remove_suffix(1);
    if (!server.empty()) {
        out += ": ";
        out += server;
    }
    if (!d.client_message.empty()) {
        out += " [";
        out += d.client_message;
        out += "]";
    }
    return out;
}

} // namespace

error::error(error_code ec, diagnostics diag)
    : boost::system::system_error(ec)
    , diag_(std::move(diag))
    , what_(describe(code(), diag_)) {}

errc errc_from_http_status(unsigned status) noexcept {
    switch (status) {
    case 400:
        return errc::bad_request;
    case 403:
        return errc::permission_denied;
    case 404:
        return errc::not_found;
    case 413:
        return errc::request_too_large;
    case 429:
        return errc::rate_limited;
    case 500:
        return errc::server_error;
    case 502:
    case 503:
    case 504:
        return errc::unavailable;
    default:
        return errc::unexpected_status;
    }
}

error_code error_code_of(const std::exception_ptr& e) {
    if (!e)
        return {};
    try {
        std::rethrow_exception(e);
    } catch (const boost::system::system_error& failure) {
        return failure.code();
    }
}

bool is_retryable(const error_code& ec) noexcept {
    if (!ec)
        return false;
    if (ec.category() == category()) {
        switch (static_cast<errc>(ec.value())) {
        case errc::timeout:
        case errc::rate_limited:
        case errc::server_error:
        case errc::unavailable:
            return true;
        default:
            return false;
        }
    }
    namespace ae = boost::asio::error;
    if (ec == ae::operation_aborted)
        return false; // cancellation is the caller's decision, never retried
    if (ec == boost::beast::error::timeout || ec == boost::beast::http::error::end_of_stream ||
        ec == boost::beast::http::error::partial_message)
        return true;
    if (ec.category() == boost::asio::error::get_ssl_category() ||
        ec.category() == boost::asio::ssl::error::get_stream_category())
        return false; // certificate or handshake problems do not heal by retrying
    // Any other system/network error (refused, reset, unreachable, eof, broken pipe...).
    return ec.category() == boost::system::system_category() ||
           ec.category() == boost::asio::error::get_misc_category() ||
           ec.category() == boost::asio::error::get_netdb_category() ||
           ec.category() == boost::system::generic_category();
}

} // namespace conclave
