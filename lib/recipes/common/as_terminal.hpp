// SPDX-License-Identifier: BSL-1.0
// A cancellation filter for operations that write nothing (reads, waits).
#pragma once

#include <boost/asio/cancellation_type.hpp>

namespace conclave::detail {

/// Out-filter of a coroutine's cancellation state: every cancellation reaches its inner
/// operations as terminal (the client's requests act on terminal cancellation). For an
/// operation that writes nothing, which any type of cancellation may end.
struct as_terminal {
    boost::asio::cancellation_type_t operator()(boost::asio::cancellation_type_t t) const noexcept {
        return t == boost::asio::cancellation_type::none ? t
                                                         : boost::asio::cancellation_type::terminal;
    }
};

} // namespace conclave::detail
