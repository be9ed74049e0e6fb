// SPDX-License-Identifier: BSL-1.0
// What `conclave lock` holds: a lock on `<prefix>/.lock` (-n 1), a slot of the semaphore
// at `<prefix>` (-n > 1), or a read or write grant of the read-write lock at `<prefix>`
// (-shared, -exclusive), behind one interface so the command has a single code path.
#pragma once

#include <conclave/lock.hpp>
#include <conclave/read_write_lock.hpp>
#include <conclave/semaphore.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <tuple>

namespace conclave::cli {

/// What `conclave lock` holds at its prefix: a plain lock (or, with -n > 1, a semaphore
/// slot), or a read-write lock's read (-shared) or write (-exclusive) grant.
enum class lock_mode { plain, shared, exclusive };

class lock_holder {
public:
    virtual ~lock_holder() = default;

    /// Waits until held by `s`. Cancellable (terminal): then nothing is left held.
    virtual boost::asio::awaitable<error_code> acquire(session& s) = 0;
    /// Completes when the grant is lost (never with success); cancellable.
    virtual boost::asio::awaitable<error_code> wait_lost() = 0;
    /// Still held, as far as this process knows (no I/O).
    virtual bool held() const = 0;
    virtual const fencing_token& token() const = 0;
    /// async_wait_health_change of the grant (never throws; operation_aborted when
    /// cancelled), and its remaining(): for the jeopardy relay.
    virtual boost::asio::awaitable<std::tuple<error_code, hold_health>>
    wait_health_change(hold_health seen) = 0;
    virtual std::chrono::steady_clock::duration remaining() const = 0;
    /// Gives the grant back (succeeds when it was already lost).
    virtual boost::asio::awaitable<error_code> release() = 0;
    /// Deletes the lock's key(s) when nobody holds or waits for them; errc::conflict (or
    /// errc::limit_conflict) while in use.
    virtual boost::asio::awaitable<error_code> destroy() = 0;

    /// The key contenders fight over (for messages).
    virtual std::string key() const = 0;
    /// An error of acquire() in words, as `consul lock` words it where it has a text.
    virtual std::string describe(const error_code& ec) const = 0;
};

/// lock_mode::plain with `limit` 1: a lock on `<prefix>/.lock`; more: a semaphore at
/// `<prefix>`. shared, exclusive (`limit` 1): the read-write lock at `<prefix>`, whose
/// contender keys hold `value`.
std::unique_ptr<lock_holder> make_lock_holder(client& c, const std::string& prefix, lock_mode mode,
                                              unsigned limit, unsigned monitor_retries,
                                              const std::string& value);

} // namespace conclave::cli
