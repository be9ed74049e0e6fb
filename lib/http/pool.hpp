// SPDX-License-Identifier: BSL-1.0
// A bounded pool of keep-alive connections with a FIFO queue of waiting requests.
#pragma once

#include "http/connection.hpp"

#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <list>
#include <memory>
#include <vector>

namespace conclave::detail::http {

class pool;

/// A connection borrowed from the pool. Returned on destruction as unusable (its slot is
/// freed) unless give_back() says it may be reused; that makes every exit path, including
/// cancellation unwinding a coroutine, return the slot.
class lease {
public:
    lease() = default;
    lease(std::shared_ptr<pool> p, std::unique_ptr<connection> c, bool reused)
        : pool_(std::move(p))
        , conn_(std::move(c))
        , reused_(reused) {}
    lease(lease&&) noexcept = default;
    lease& operator=(lease&& other) noexcept;
    ~lease();

    explicit operator bool() const { return conn_ != nullptr; }
    connection& operator*() const { return *conn_; }
    connection* operator->() const { return conn_.get(); }
    /// True when the connection served earlier requests (it may have gone stale).
    bool reused() const { return reused_; }
    /// Returns the connection, for reuse if it is still reusable.
    void give_back();

private:
    std::shared_ptr<pool> pool_;
    std::unique_ptr<connection> conn_;
    bool reused_ = false;
};

struct pool_counters {
    std::uint64_t connects = 0;
    std::size_t open = 0;
    std::size_t idle = 0;
};

class pool : public std::enable_shared_from_this<pool> {
public:
    pool(asio::any_io_executor ex, client_config cfg);

    /// A connection within `deadline`: an idle one, a new one if under the limit, or the
    /// next one released. Fails with errc::timeout, errc::pool_closed, a connect error, or
    /// throws operation_aborted when the calling coroutine is cancelled.
    asio::awaitable<std::pair<error_code, lease>> acquire(clock::time_point deadline);
    /// An idle connection at once, or an empty lease: the usual case, without the
    /// coroutine frame acquire() costs.
    lease take_idle();

    /// Closes idle connections and fails every waiter with errc::pool_closed.
    void close();

    pool_counters counters() const;
    const client_config& config() const { return cfg_; }

private:
    friend class lease;
    struct waiter;

    void release(std::unique_ptr<connection> c);
    void free_slot();

    asio::any_io_executor ex_;
    client_config cfg_;
    std::shared_ptr<asio::ssl::context> tls_;
    std::vector<std::unique_ptr<connection>> idle_; // most recently used at the back
    std::list<waiter*> waiters_;
    std::size_t open_ = 0; // connections in use, idle, or being opened
    std::uint64_t connects_ = 0;
    bool closed_ = false;
};

} // namespace conclave::detail::http
