// SPDX-License-Identifier: BSL-1.0
// What an operation awaited with the default token threw, for tests of error messages.
#pragma once

#include <conclave/with_diagnostics.hpp>

#include <boost/asio/awaitable.hpp>

#include <string>
#include <utility>

namespace conclave::test {

/// What `op` (awaited with the default token) threw: its code and text (empty: nothing).
template <class Op>
boost::asio::awaitable<std::pair<error_code, std::string>> thrown_by(Op op) {
    try {
        co_await std::move(op);
    } catch (const conclave::error& e) {
        co_return std::pair<error_code, std::string>{e.code(), e.what()};
    }
    co_return std::pair<error_code, std::string>{};
}

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace conclave::test
