// SPDX-License-Identifier: BSL-1.0
// Precompiled header of conclave's own programs (the CLI, the benchmark): the heavy, stable
// headers most of their files include.
#pragma once

#include <conclave/conclave.hpp>
#include <conclave/dev/agent.hpp>

#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
