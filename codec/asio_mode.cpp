// SPDX-License-Identifier: BSL-1.0
// The symbol that says how this build of conclave compiled Asio and Beast (see
// conclave/detail/asio_mode.hpp).
#include <conclave/detail/asio_mode.hpp>

namespace conclave::detail {

const int CONCLAVE_ASIO_MODE_SYMBOL = 1;

} // namespace conclave::detail
