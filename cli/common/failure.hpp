// SPDX-License-Identifier: BSL-1.0
// A failed operation's error code and its whole text (Consul's words, and which ACL
// permission is missing), for the commands' messages.
#pragma once

#include <conclave/error.hpp>
#include <conclave/with_diagnostics.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <string>

namespace conclave::cli {

/// For `auto [e, value] = co_await op(with_text)`: an error comes as an exception_ptr
/// carrying the diagnostics; failure_of(e) turns it back into a code and a text.
inline constexpr auto with_text =
    with_diagnostics(boost::asio::as_tuple(boost::asio::use_awaitable));

struct failure {
    error_code ec;
    std::string text; ///< conclave::error::what(): the code's message, Consul's text, ours
    std::string client_message; ///< ours alone (diagnostics::client_message)
    explicit operator bool() const noexcept { return static_cast<bool>(ec); }
};

inline failure failure_of(const std::exception_ptr& e) {
    if (!e)
        return {};
    try {
        std::rethrow_exception(e);
    } catch (const conclave::error& x) {
        return {x.code(), x.what(), x.diag().client_message};
    }
}

} // namespace conclave::cli
