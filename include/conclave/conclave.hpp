// SPDX-License-Identifier: BSL-1.0
/// \file
/// The whole public API in one include (but the dev agent's): conclave, coordination over
/// Consul with C++20 coroutines.
#pragma once

#include <conclave/barrier.hpp>
#include <conclave/client.hpp>
#include <conclave/config.hpp>
#include <conclave/counter.hpp>
#include <conclave/elector.hpp>
#include <conclave/error.hpp>
#include <conclave/fence.hpp>
#include <conclave/grant.hpp>
#include <conclave/group.hpp>
#include <conclave/hold_scope.hpp>
#include <conclave/latch.hpp>
#include <conclave/lock.hpp>
#include <conclave/log.hpp>
#include <conclave/metrics.hpp>
#include <conclave/multi_lock.hpp>
#include <conclave/observer.hpp>
#include <conclave/read_write_lock.hpp>
#include <conclave/semaphore.hpp>
#include <conclave/session.hpp>
#include <conclave/types.hpp>
#include <conclave/version.hpp>
#include <conclave/watch.hpp>
#include <conclave/with_diagnostics.hpp>

/// \namespace conclave
/// Everything conclave declares: the Consul client (client, client_config), the recipes
/// built on it (session, lock, semaphore, elector, watch, counter, group, barrier,
/// double_barrier, countdown_latch, fence, async_fenced_put, with_lock) and their errors (errc,
/// error). The embedded dev agent is in conclave::dev.
