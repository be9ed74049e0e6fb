// SPDX-License-Identifier: BSL-1.0
// A bounded pool of keep-alive connections with a FIFO queue of waiting requests.
#pragma once

#include "http/connection.hpp"

#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <list>
#include <memory>
#include <set>
#include <vector>

namespace conclave::detail::http {

class pool;

/// A connection borrowed from the pool. Returned on destruction as unusable (its slot is
/// freed) unless give_back() says it may be reused; that makes every exit path, including
/// cancellation unwinding a coroutine, return the slot.
class lease {
public:
    lease() = default;
    lease(std::shared_ptr<pool> p, std::unique_ptr<connection> c)
        : pool_(std::move(p))
        , conn_(std::move(c)) {}
    lease(lease&&) noexcept = default;
    lease& operator=(lease&& other) noexcept;
    ~lease();

    explicit operator bool() const { return conn_ != nullptr; }
    connection& operator*() const { return *conn_; }
    connection* operator->() const { return conn_.get(); }
    /// True when the connection served earlier requests (it may have gone stale).
    bool reused() const { return conn_ && conn_->answered(); }
    /// Returns the connection, for reuse if it is still reusable.
    void give_back();
    /// When the connection is dropped (not given back): Consul counts it until `until`
    /// (a blocking query it still holds), so its slot stays taken until then.
    void hold_slot_until(clock::time_point until) { hold_until_ = until; }

private:
    void drop() noexcept;

    std::shared_ptr<pool> pool_;
    std::unique_ptr<connection> conn_;
    clock::time_point hold_until_{};
};

struct pool_counters {
    std::uint64_t connects = 0;
    std::size_t open = 0;
    std::size_t idle = 0;
    std::size_t limit = 0;              ///< connections allowed at once now
    std::uint64_t refused_connects = 0; ///< connections Consul refused (its per-client limit)
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

    /// Consul refused a connection this pool opened: the address already holds as many as
    /// Consul accepts from it (limits.http_max_conns_per_client; other processes on the
    /// address count too). The pool keeps to the connections it has (the refused one's
    /// slot included, which the caller's lease still holds): it opens no more, and the
    /// requests wait for one of those instead. Returns the new limit (0: this pool had no
    /// other connection, so it cannot reach Consul now).
    std::size_t connection_refused();
    /// Connections allowed at once: max_connections, or fewer once Consul refused one.
    std::size_t limit() const noexcept { return limit_; }
    /// Below the configured limits after a refusal, with none (refused or tried) for
    /// client_config::connection_limit_retry: allows one connection more, and returns true.
    /// Called when a request would wait for a connection; a refusal lowers it again.
    bool try_higher_limit();

    pool_counters counters() const;
    const client_config& config() const { return cfg_; }

private:
    friend class lease;
    struct waiter;

    void release(std::unique_ptr<connection> c);
    void free_slot();
    /// Frees a slot at `until` (see lease::hold_slot_until).
    void free_slot_at(clock::time_point until);
    void free_expired_slots();
    void watch_held_slots();

    asio::any_io_executor ex_;
    client_config cfg_;
    std::shared_ptr<asio::ssl::context> tls_;
    std::vector<std::unique_ptr<connection>> idle_; // most recently used at the back
    std::list<waiter*> waiters_;
    std::size_t open_ = 0; // connections in use, idle, being opened, or held (below)
    std::multiset<clock::time_point> held_; // slots of dropped connections Consul still counts
    asio::steady_timer held_timer_;
    /// The limit as configured: max_connections, within consul_connection_limit.
    std::size_t configured_limit() const;

    std::size_t limit_;                    // at most this many open (see connection_refused)
    clock::time_point limit_changed_at_{}; // last refusal, or last try_higher_limit()
    std::uint64_t connects_ = 0;
    std::uint64_t refused_ = 0;
    bool closed_ = false;
};

} // namespace conclave::detail::http
