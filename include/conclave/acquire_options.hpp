// SPDX-License-Identifier: BSL-1.0
/// \file
/// What every recipe that takes and watches a grant is given: the value it stores, how long
/// its blocking queries wait, how it watches what it holds and how long its cleanup may take.
#pragma once

#include <conclave/detail/options_base.hpp>

#include <chrono>
#include <string>

namespace conclave {

/// The options that lock_options, semaphore_options, multi_lock_options,
/// read_write_lock_options and elector_options share. `Options` is the option type built on
/// it, which each with_* call returns.
template <class Options>
struct acquire_options : detail::options_base<Options> {
    /// Stored with the grant, for people and tools: in the key while it is held, and kept on
    /// release (lock, multi-lock, elector; Go: LockOptions.Value), or in the holder's
    /// contender key (semaphore, read-write lock; Go: SemaphoreOptions.Value).
    std::string value;
    /// Longest blocking query while waiting (Consul adds up to 1/16 of jitter).
    std::chrono::milliseconds wait{15000};
    /// Consecutive failed reads tolerated while watching what is held before it counts as
    /// lost (`consul lock -monitor-retry`). The session's local deadline bounds it anyway.
    unsigned monitor_retries = 3;
    /// Pause after a failed read before the next one (Go: LockOptions.MonitorRetryTime).
    std::chrono::milliseconds monitor_retry_wait{1000};
    /// Bound on the cleanup sent when an acquire ends without its grant (cancelled or
    /// failed): the release, or the delete of its contender key.
    std::chrono::milliseconds cleanup_timeout{2000};

    Options& with_value(std::string v) { return this->set(value, std::move(v)); }
    Options& with_wait(std::chrono::milliseconds v) { return this->set(wait, v); }
    /// Sets monitor_retries to `n` and monitor_retry_wait to `every`.
    Options& with_monitor_retries(unsigned n, std::chrono::milliseconds every) {
        monitor_retries = n;
        return this->set(monitor_retry_wait, every);
    }
    Options& with_cleanup_timeout(std::chrono::milliseconds v) {
        return this->set(cleanup_timeout, v);
    }
};

} // namespace conclave
