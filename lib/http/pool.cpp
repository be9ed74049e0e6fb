// SPDX-License-Identifier: BSL-1.0
#include "http/pool.hpp"
#include "observe/log_line.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace conclave::detail::http {

lease& lease::operator=(lease&& other) noexcept {
    if (this != &other) {
        drop();
        pool_ = std::move(other.pool_);
        conn_ = std::move(other.conn_);
        hold_until_ = other.hold_until_;
    }
    return *this;
}

lease::~lease() {
    drop();
}

void lease::drop() noexcept {
    if (pool_ && conn_) {
        conn_.reset(); // never reuse a connection whose exchange did not finish
        if (hold_until_ > clock::now())
            pool_->free_slot_at(hold_until_);
        else
            pool_->free_slot();
    }
}

void lease::give_back() {
    if (pool_ && conn_)
        pool_->release(std::move(conn_));
    pool_.reset();
}

// A request waiting for a connection. It lives in the waiting coroutine's frame and
// unlinks itself however that coroutine ends.
struct pool::waiter {
    waiter(pool& p, asio::any_io_executor ex, clock::time_point deadline)
        : owner(p)
        , timer(ex, deadline) {
        pos = owner.waiters_.insert(owner.waiters_.end(), this);
    }
    ~waiter() {
        if (queued)
            owner.waiters_.erase(pos);
        if (owner.waiters_.empty())
            owner.held_timer_.cancel();
        if (conn) // handed a connection but gone (cancelled): pass it on
            owner.release(std::move(conn));
        else if (slot_granted)
            owner.free_slot();
    }
    void wake() {
        queued = false;
        owner.waiters_.erase(pos);
        timer.cancel();
    }

    pool& owner;
    asio::steady_timer timer;
    std::list<waiter*>::iterator pos;
    bool queued = true;
    std::unique_ptr<connection> conn; // a released connection handed over directly
    bool slot_granted = false;        // a freed slot handed over: open a new connection
    bool closed = false;
};

pool::pool(asio::any_io_executor ex, client_config cfg)
    : ex_(std::move(ex))
    , cfg_(std::move(cfg))
    , held_timer_(ex_) {
    if (cfg_.tls.enabled)
        tls_ = make_tls_context(cfg_.tls);
    limit_ = configured_limit();
}

std::size_t pool::configured_limit() const {
    return std::max<std::size_t>(1, std::min(cfg_.max_connections, cfg_.consul_connection_limit));
}

asio::awaitable<std::pair<error_code, lease>> pool::acquire(clock::time_point deadline) {
    using result = std::pair<error_code, lease>;
    auto self = shared_from_this();
    if (closed_)
        co_return result{make_error_code(errc::pool_closed), lease{}};

    if (auto idle = take_idle())
        co_return result{error_code{}, std::move(idle)};
    free_expired_slots();
    if (open_ >= limit_)
        try_higher_limit();
    if (open_ < limit_) {
        ++open_;
    } else {
        waiter w{*this, ex_, deadline};
        if (waiters_.size() == 1)
            watch_held_slots();
        auto [ec] = co_await w.timer.async_wait(asio::as_tuple(asio::use_awaitable));
        if (w.conn)
            co_return result{error_code{}, lease{self, std::move(w.conn)}};
        if (w.slot_granted) {
            w.slot_granted = false; // ours now: fall through to open a connection
        } else if (w.closed) {
            co_return result{make_error_code(errc::pool_closed), lease{}};
        } else if (!ec) {
            co_return result{make_error_code(errc::timeout), lease{}};
        } else {
            co_return result{asio::error::operation_aborted, lease{}};
        }
    }

    // Holding a slot: open a connection. The slot is given back on every failure path.
    struct slot_guard {
        pool* p;
        ~slot_guard() {
            if (p)
                p->free_slot();
        }
    } guard{this};
    const auto remaining = std::max<clock::duration>(deadline - clock::now(), clock::duration{0});
    const clock::duration connect_timeout =
        std::min<clock::duration>(cfg_.connect_timeout, remaining);
    auto [ec, conn] = co_await open_connection(ex_, cfg_, tls_, connect_timeout);
    if (ec) {
        if (ec == boost::beast::error::timeout)
            ec = make_error_code(errc::timeout);
        co_return result{ec, lease{}};
    }
    guard.p = nullptr;
    ++connects_;
    conn->report_to(cfg_.observer);
    detail::log_line(cfg_.log, log_level::trace, "connection ", connects_, " opened to ",
                     cfg_.describe_address());
    co_return result{error_code{}, lease{self, std::move(conn)}};
}

lease pool::take_idle() {
    if (closed_)
        return {};
    while (!idle_.empty()) {
        auto c = std::move(idle_.back());
        idle_.pop_back();
        const auto idle_for = clock::now() - c->idle_since;
        // A server that restarted or dropped the connection while it was idle: a request
        // written to it would fail (a write could not even be retried). Connections idle for
        // less than a millisecond are not checked: the peek is a system call, which a busy
        // lock cycle would otherwise pay per request.
        if (idle_for < cfg_.idle_timeout &&
            (idle_for < std::chrono::milliseconds{1} || !c->closed_by_peer()))
            return lease{shared_from_this(), std::move(c)};
        --open_; // expired or closed while idle
    }
    return {};
}

void pool::release(std::unique_ptr<connection> c) {
    if (!c->reusable() || closed_) {
        c.reset();
        free_slot();
        return;
    }
    c->idle_since = clock::now();
    if (!waiters_.empty()) {
        waiter* w = waiters_.front();
        w->conn = std::move(c);
        w->wake();
        return;
    }
    idle_.push_back(std::move(c));
}

void pool::free_slot() {
    // Over the limit (it was lowered while the connections were open): the slot goes.
    if (!waiters_.empty() && !closed_ && open_ <= limit_) {
        waiter* w = waiters_.front();
        w->slot_granted = true; // the slot passes to the waiter; open_ is unchanged
        w->wake();
        return;
    }
    --open_;
}

void pool::close() {
    closed_ = true;
    held_timer_.cancel();
    open_ -= idle_.size();
    idle_.clear();
    while (!waiters_.empty()) {
        waiter* w = waiters_.front();
        w->closed = true;
        w->wake();
    }
}

void pool::free_slot_at(clock::time_point until) {
    held_.insert(until);
    if (!waiters_.empty())
        watch_held_slots();
}

void pool::free_expired_slots() {
    const auto now = clock::now();
    while (!held_.empty() && *held_.begin() <= now) {
        held_.erase(held_.begin());
        free_slot();
    }
}

// Only while requests wait for a slot: a timer armed otherwise would keep the program's
// io_context::run() from returning for the rest of a blocking query's wait.
void pool::watch_held_slots() {
    if (held_.empty())
        return;
    held_timer_.expires_at(*held_.begin()); // (cancels the wait armed before)
    held_timer_.async_wait([weak = weak_from_this()](error_code ec) {
        auto self = weak.lock();
        if (!self || ec)
            return;
        self->free_expired_slots();
        if (!self->waiters_.empty())
            self->watch_held_slots();
    });
}

std::size_t pool::connection_refused() {
    ++refused_;
    // open_ counts the refused connection's slot: the others are what Consul accepted.
    const std::size_t accepted = open_ > 0 ? open_ - 1 : 0;
    // (At least 1: a later connection may be accepted once the address has fewer.)
    limit_ = std::max<std::size_t>(1, std::min(limit_, accepted));
    limit_changed_at_ = clock::now();
    return accepted;
}

bool pool::try_higher_limit() {
    if (limit_ >= configured_limit() || closed_)
        return false;
    const auto now = clock::now();
    if (now - limit_changed_at_ < cfg_.connection_limit_retry)
        return false;
    ++limit_;
    limit_changed_at_ = now;
    detail::log_line(cfg_.log, log_level::info, "trying one connection more to ",
                     cfg_.describe_address(), " (limit ", limit_, ")");
    return true;
}

pool_counters pool::counters() const {
    return {connects_, open_, idle_.size(), limit_, refused_};
}

} // namespace conclave::detail::http
