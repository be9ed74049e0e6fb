// SPDX-License-Identifier: BSL-1.0
#pragma once

#include "support/catch.hpp"

#include <conclave/client.hpp>
#include <conclave/dev/agent.hpp>

#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <chrono>
#include <string>
#include <vector>
