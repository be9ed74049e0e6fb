// SPDX-License-Identifier: BSL-1.0
// conclave's error codes: category, messages, HTTP status mapping and retryability.
#include "support/catch.hpp"

#include <conclave/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/system/error_code.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <system_error>

using conclave::errc;
using conclave::error_code;

namespace {

constexpr errc all_errcs[] = {
    errc::timeout,        errc::session_invalidated, errc::lock_lost,    errc::conflict,
    errc::limit_conflict, errc::lock_delay,          errc::bad_request,  errc::permission_denied,
    errc::not_found,      errc::request_too_large,   errc::rate_limited, errc::server_error,
    errc::unavailable,    errc::unexpected_status,   errc::bad_response, errc::invalid_argument,
    errc::invalid_config, errc::pool_closed,         errc::task_failed,  errc::session_expired,
    errc::check_critical, errc::session_handed_over,
};

} // namespace

TEST_CASE("error: errc converts implicitly to error_code and compares", "[error]") {
    error_code ec = conclave::errc::timeout;
    CHECK(ec);
    CHECK(ec == errc::timeout);
    CHECK(ec != errc::server_error);
    CHECK(ec.category() == conclave::category());
    CHECK(ec.value() == static_cast<int>(errc::timeout));
    CHECK(ec == conclave::make_error_code(errc::timeout));

    ec = errc::pool_closed; // assignment from the enum
    CHECK(ec == errc::pool_closed);
    ec.clear();
    CHECK_FALSE(ec);
    CHECK(ec != errc::timeout);

    // Not equal to an unrelated category's code with the same value.
    CHECK(error_code(static_cast<int>(errc::timeout), boost::system::generic_category()) !=
          errc::timeout);
}

TEST_CASE("error: category name and messages", "[error]") {
    CHECK(std::string(conclave::category().name()) == "conclave");
    std::set<std::string> messages;
    for (errc e : all_errcs) {
        const error_code ec = e;
        INFO("errc value " << static_cast<int>(e));
        CHECK_FALSE(ec.message().empty());
        CHECK(ec.message() != "unknown conclave error");
        messages.insert(ec.message());
    }
    CHECK(messages.size() == std::size(all_errcs)); // every message is distinct
    CHECK(conclave::category().message(0) == "unknown conclave error");
    CHECK(conclave::category().message(9999) == "unknown conclave error");
}

TEST_CASE("error: errc_from_http_status", "[error]") {
    using conclave::errc_from_http_status;
    CHECK(errc_from_http_status(400) == errc::bad_request);
    CHECK(errc_from_http_status(403) == errc::permission_denied);
    CHECK(errc_from_http_status(404) == errc::not_found);
    CHECK(errc_from_http_status(413) == errc::request_too_large);
    CHECK(errc_from_http_status(429) == errc::rate_limited);
    CHECK(errc_from_http_status(500) == errc::server_error);
    CHECK(errc_from_http_status(502) == errc::unavailable);
    CHECK(errc_from_http_status(503) == errc::unavailable);
    CHECK(errc_from_http_status(504) == errc::unavailable);
    CHECK(errc_from_http_status(418) == errc::unexpected_status);
    CHECK(errc_from_http_status(401) == errc::unexpected_status);
    CHECK(errc_from_http_status(409) == errc::unexpected_status);
    CHECK(errc_from_http_status(501) == errc::unexpected_status);
    CHECK(errc_from_http_status(302) == errc::unexpected_status);
    CHECK(errc_from_http_status(0) == errc::unexpected_status);
}

TEST_CASE("error: is_retryable for conclave codes", "[error]") {
    using conclave::is_retryable;
    CHECK(is_retryable(errc::timeout));
    CHECK(is_retryable(errc::server_error));
    CHECK(is_retryable(errc::rate_limited));
    CHECK(is_retryable(errc::unavailable));

    CHECK_FALSE(is_retryable(errc::session_invalidated));
    CHECK_FALSE(is_retryable(errc::session_expired));
    CHECK_FALSE(is_retryable(errc::check_critical));
    CHECK_FALSE(is_retryable(errc::conflict));
    CHECK_FALSE(is_retryable(errc::bad_request));
    CHECK_FALSE(is_retryable(errc::permission_denied));
    CHECK_FALSE(is_retryable(errc::not_found));
    CHECK_FALSE(is_retryable(errc::request_too_large));
    CHECK_FALSE(is_retryable(errc::lock_lost));
    CHECK_FALSE(is_retryable(errc::lock_delay));
    CHECK_FALSE(is_retryable(errc::unexpected_status));
    CHECK_FALSE(is_retryable(errc::bad_response));
    CHECK_FALSE(is_retryable(errc::invalid_argument));
    CHECK_FALSE(is_retryable(errc::invalid_config));
    CHECK_FALSE(is_retryable(errc::pool_closed));
}

TEST_CASE("error: is_retryable for network and Beast errors", "[error]") {
    using conclave::is_retryable;
    namespace ae = boost::asio::error;
    CHECK(is_retryable(ae::connection_refused));
    CHECK(is_retryable(ae::connection_reset));
    CHECK(is_retryable(ae::eof));
    CHECK(is_retryable(ae::broken_pipe));
    CHECK(is_retryable(ae::host_unreachable));
    CHECK(is_retryable(boost::beast::error::timeout));
    CHECK(is_retryable(boost::beast::http::error::end_of_stream));
    CHECK(is_retryable(boost::beast::http::error::partial_message));

    // Cancellation is the caller's decision; success is not an error.
    CHECK_FALSE(is_retryable(ae::operation_aborted));
    CHECK_FALSE(is_retryable(error_code{}));
    // TLS failures do not heal by retrying.
    CHECK_FALSE(is_retryable(boost::asio::ssl::error::stream_truncated));
    // Malformed HTTP is not a transient network problem.
    CHECK_FALSE(is_retryable(boost::beast::http::error::bad_version));
}

TEST_CASE("error_code_of reads the code an exception carries", "[error]") {
    using conclave::errc;
    CHECK_FALSE(conclave::error_code_of(nullptr));
    const auto lost = std::make_exception_ptr(
        conclave::error(make_error_code(errc::lock_lost), conclave::diagnostics{}));
    CHECK(conclave::error_code_of(lost) == errc::lock_lost);
    const auto aborted = std::make_exception_ptr(
        boost::system::system_error(make_error_code(boost::asio::error::operation_aborted)));
    CHECK(conclave::error_code_of(aborted) == boost::asio::error::operation_aborted);
    // Not an error code: the exception itself goes on.
    const auto other = std::make_exception_ptr(std::runtime_error("a bug"));
    CHECK_THROWS_AS(conclave::error_code_of(other), std::runtime_error);
}
