// SPDX-License-Identifier: BSL-1.0
// conclave: coordination over Consul with C++20 coroutines. The whole public API.
#pragma once

#include <conclave/client.hpp>
#include <conclave/config.hpp>
#include <conclave/elector.hpp>
#include <conclave/error.hpp>
#include <conclave/hold_scope.hpp>
#include <conclave/lock.hpp>
#include <conclave/semaphore.hpp>
#include <conclave/session.hpp>
#include <conclave/types.hpp>
#include <conclave/version.hpp>
#include <conclave/watch.hpp>
#include <conclave/with_diagnostics.hpp>
