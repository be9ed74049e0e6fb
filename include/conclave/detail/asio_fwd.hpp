// SPDX-License-Identifier: BSL-1.0
// The few Asio headers public headers need: executors, completion tokens, type erasure.
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

namespace conclave {
namespace asio = boost::asio;
}
