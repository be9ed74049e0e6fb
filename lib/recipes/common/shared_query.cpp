// SPDX-License-Identifier: BSL-1.0
// shared_query: subscriptions, the query loop, and the registry of a client's hubs.
#include "consul/client_impl.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/common/shared_query.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace conclave::detail {

namespace {

// After the last user left, the query lingers this long in case another comes (a holder
// that releases and acquires again) before it is cancelled; not when no recipe object on
// the key or prefix is left (end_if_unowned).
constexpr auto idle_grace = std::chrono::milliseconds{100};

} // namespace

void delete_in_background(client& c, std::string key, std::uint64_t index) {
    auto remove = [](client consul, std::string k, std::uint64_t i) -> asio::awaitable<void> {
        co_await consul.async_kv_delete(k, kv_delete_options{}.with_cas(i),
                                        asio::as_tuple(asio::use_awaitable));
    };
    asio::co_spawn(c.get_executor(), remove(c, std::move(key), index), [](std::exception_ptr) {});
}

std::weak_ptr<void>& shared_slot(const client& c, const std::string& name) {
    return client_access::impl(c).shared_state[name];
}

shared_query::shared_query(client c, std::string registry_name, settings s)
    : consul(std::move(c))
    , registry_name_(std::move(registry_name))
    , settings_(s)
    , idle_timer_(consul.get_executor()) {}

shared_query::~shared_query() {
    auto& registry = client_access::impl(consul).shared_state;
    auto it = registry.find(registry_name_);
    if (it != registry.end() && it->second.expired())
        registry.erase(it);
}

bool shared_query::accept_read(std::uint64_t index) {
    if (read_stopped_)
        return false; // a read ended on purpose (forgotten, idle): what it saw is not news
    // Below the index the read blocked at, or the last read's, or the state we knew when
    // the read was sent: Consul's history was replaced (a restart with empty state, a
    // snapshot restore) and this is the new truth. Not so below a local write made while
    // the read was in flight: the read was answered before it.
    const bool raced_with_write = writes_ != writes_at_read_;
    const bool went_back = index < read_index_ || index < asked_index_ ||
                           (!raced_with_write && known_ && index < state_index_);
    read_index_ = index;
    failures_ = 0;
    if (!went_back && known_ && index < state_index_) {
        poke(); // the failure count was reset
        return false;
    }
    known_ = true;
    state_index_ = index;
    index_ = index;
    return true;
}

void shared_query::accept_write(std::uint64_t modify_index) {
    ++writes_;
    known_ = true;
    state_index_ = modify_index;
    index_ = std::max(index_, modify_index);
}

void shared_query::accept_partial_write(std::uint64_t modify_index) {
    ++writes_;
    known_ = true;
    state_index_ = modify_index;
}

void shared_query::forget() {
    known_ = false;
    stop_read(); // the query reads afresh at once
    poke();
}

void shared_query::stop_read() {
    if (!reading_ || read_stopped_)
        return;
    read_stopped_ = true;
    read_stop_.emit(asio::cancellation_type::terminal);
}

namespace {
struct subscription {
    std::shared_ptr<shared_query> query;
    explicit subscription(std::shared_ptr<shared_query> q)
        : query(std::move(q)) {}
    ~subscription() {
        query->unsubscribe_for_handle();
        // The last holder of the hub may be a lease's monitor, gone after its lock object.
        shared_query::let_go(query);
    }
};
} // namespace

std::shared_ptr<void> shared_query::subscribe() {
    ++subscribers_;
    subscribers_changed_.notify_all();
    wake_idle_query();
    if (!running_) {
        running_ = true;
        asio::co_spawn(consul.get_executor(), run(shared_from_this()), [](std::exception_ptr) {});
    }
    return std::make_shared<subscription>(shared_from_this());
}

void shared_query::unsubscribe_for_handle() {
    --subscribers_;
    if (subscribers_ == 0)
        idle_since_ = clock::now();
    subscribers_changed_.notify_all();
    if (subscribers_ > 0 || !reading_)
        return;
    // The last user left during a read: end it after the grace period unless someone
    // subscribes meanwhile.
    idle_timer_.expires_after(idle_grace);
    idle_timer_.async_wait([weak = weak_from_this()](const error_code& ec) {
        auto query = weak.lock();
        if (!ec && query && query->subscribers_ == 0)
            query->stop_read();
    });
}

void shared_query::end_if_unowned() {
    if (!running_ || subscribers_ > 0 || !unowned())
        return;
    // Whichever wait the loop is in ends, and the loop with it. Except a read that a write
    // of ours has already outdated (a release, typically): Consul answers it at once, so
    // it is left to finish. Ended, it would keep its connection counted until its wait is
    // over, at Consul (1.8) and in the pool (see client.cpp): a loop of short holds, each
    // on a lock object of its own, would take every connection for a wait each.
    idle_timer_.cancel();
    if (!(reading_ && asked_index_ > 0 && state_index_ > asked_index_))
        stop_read();
    linger_end_.notify_all();
    subscribers_changed_.notify_all();
}

void shared_query::wake_idle_query() {
    if (!lingering_ || subscribers_ == 0 || linger_check_posted_)
        return;
    // Decided once the caller's current step is done: a subscriber that starts a
    // transaction at once (an acquire of a free key) or leaves at once (a short hold) does
    // not need the query, and the transaction's end checks again.
    linger_check_posted_ = true;
    asio::post(consul.get_executor(), [weak = weak_from_this()] {
        const auto query = weak.lock();
        if (!query)
            return;
        query->linger_check_posted_ = false;
        if (query->lingering_ && query->subscribers_ > 0 && !query->transaction_in_flight())
            query->linger_end_.notify_all();
    });
}

asio::awaitable<void> shared_query::linger() {
    lingering_ = true;
    struct lingering_flag {
        bool& flag;
        ~lingering_flag() { flag = false; }
    } reset{lingering_};
    // Until a subscriber needs the query, or the grace since the last one left is over.
    // Subscribers that come and go meanwhile move the end, without waking this loop.
    while (subscribers_ == 0 || transaction_in_flight()) {
        const auto end = idle_since_ + idle_grace;
        if (subscribers_ == 0 && (clock::now() >= end || unowned()))
            co_return;
        co_await linger_end_.wait(subscribers_ == 0 ? end : clock::now() + idle_grace);
    }
}

asio::awaitable<void> shared_query::idle_for_a_while() {
    for (;;) {
        while (subscribers_ > 0)
            co_await subscribers_changed_.wait(clock::time_point::max());
        if (unowned())
            co_return;
        co_await subscribers_changed_.wait(clock::now() + idle_grace);
        if (subscribers_ == 0)
            co_return;
    }
}

asio::awaitable<void> shared_query::run(std::shared_ptr<shared_query> self) {
    struct running_flag {
        shared_query& query;
        ~running_flag() {
            query.running_ = false;
            query.query_stopped();
        }
    } running{*this};
    for (;;) {
        while (transaction_in_flight() && subscribers_ > 0)
            co_await changed.wait(clock::time_point::max());
        if (subscribers_ == 0) {
            co_await linger();
            if (subscribers_ == 0)
                co_return;
            continue;
        }

        const bool blocking = known_ && failures_ == 0;
        auto q = blocking
                     ? query_options::blocking(stall_pacing::blocking_index(index_), settings_.wait)
                     : query_options{};
        read_diag_.clear();
        q.diag = &read_diag_;
        asked_index_ = q.index;
        writes_at_read_ = writes_;
        reading_ = true;
        const auto started = clock::now();
        const auto ec = co_await read_once(q, read_stop_.slot());
        reading_ = false;
        if (std::exchange(read_stopped_, false))
            continue; // forgotten (read afresh), or idle (the loop's top ends the query)
        refusal_ = ec == errc::permission_denied ? ec : error_code{};
        if (refusal_)
            refusal_diag_ = read_diag_;
        if (ec) {
            // Counted for the monitors' retry budget; waiters simply wait.
            ++failures_;
            poke();
            // As Go's monitor: a fixed wait between tries, so that the retry budget of the
            // monitors (monitor_retries × monitor_retry_wait) is an outage duration.
            using namespace asio::experimental::awaitable_operators;
            auto pause = detail::sleep_for(settings_.monitor_retry_wait);
            if ((co_await (std::move(pause) || idle_for_a_while())).index() == 1)
                co_return;
            continue;
        }
        co_await after_read();
        // Answered without news before the wait was over (a proxy or server answering at
        // once with the same index, or moving it back): the next read waits a little.
        const auto next =
            pacing_.on_reply(q.index, read_index_, settings_.wait, started, clock::now());
        if (next > clock::now() && subscribers_ > 0) {
            using namespace asio::experimental::awaitable_operators;
            auto pause = detail::sleep_for(next - clock::now());
            if ((co_await (std::move(pause) || idle_for_a_while())).index() == 1)
                co_return;
        }
    }
    (void)self; // keeps the hub alive while the query runs
}

} // namespace conclave::detail
