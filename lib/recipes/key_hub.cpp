// key_hub: the registry per client, the shared blocking query and the state it keeps.
#include "consul/client_impl.hpp"
#include "recipes/deadline.hpp"
#include "recipes/key_hub.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace conclave::detail {

using namespace asio::experimental::awaitable_operators;

namespace {

std::string registry_name(const std::string& key, bool fair) {
    return (fair ? "lock-hub:fair:" : "lock-hub:") + key;
}

// After the last user left, the query lingers this long in case another comes (a holder
// that releases and acquires again) before it is cancelled.
constexpr auto idle_grace = std::chrono::milliseconds{100};

} // namespace

std::shared_ptr<key_hub> key_hub::of(const client& c, const std::string& key, settings s) {
    auto& registry = client_access::impl(c).shared_state;
    auto& slot = registry[registry_name(key, s.fair)];
    if (auto existing = std::static_pointer_cast<key_hub>(slot.lock()))
        return existing;
    auto hub = std::make_shared<key_hub>(c, key, s);
    slot = hub;
    return hub;
}

key_hub::key_hub(client c, std::string k, settings s)
    : consul(std::move(c))
    , key(std::move(k))
    , settings_(s)
    , idle_timer_(consul.get_executor()) {}

key_hub::~key_hub() {
    auto& registry = client_access::impl(consul).shared_state;
    auto it = registry.find(registry_name(key, settings_.fair));
    if (it != registry.end() && it->second.expired())
        registry.erase(it);
}

void key_hub::saw_write(const kv_entry& e) {
    if (known_ && e.modify_index < state_index_)
        return; // we already know a later state
    known_ = true;
    entry_ = e;
    state_index_ = e.modify_index;
    index_ = std::max(index_, e.modify_index);
    poke();
}

void key_hub::saw_read(std::optional<kv_entry> e, std::vector<kv_entry> contenders,
                       std::uint64_t index) {
    const bool went_back = index < read_index_;
    read_index_ = index;
    failures_ = 0;
    if (!went_back && known_ && index < state_index_) {
        // Older than a local write we already know about: keep ours, block from there.
        poke(); // the failure count was reset
        return;
    }
    // A read that went backwards (snapshot restore, restarted agent) is the new truth: the
    // query blocks from the index Consul gives now, not from ours.
    known_ = true;
    entry_ = std::move(e);
    std::sort(contenders.begin(), contenders.end(),
              [](const kv_entry& a, const kv_entry& b) { return a.create_index < b.create_index; });
    contenders_ = std::move(contenders);
    std::erase_if(pruning_, [&](const std::string& k) {
        return std::none_of(contenders_.begin(), contenders_.end(),
                            [&](const kv_entry& c) { return c.key == k; });
    });
    state_index_ = index;
    index_ = index;
    poke();
}

bool key_hub::first_in_line(const hub_waiter& w) const {
    if (w.contender_key.empty() || state_index_ < w.contender_index)
        return false; // not enqueued yet, or our view predates our own contender key
    for (const auto& c : contenders_) {
        if (c.session.empty())
            continue; // its session is gone (released, not deleted): skipped, pruned
        return c.key == w.contender_key;
    }
    return false;
}

void key_hub::contender_gone(const std::string& k) {
    std::erase_if(contenders_, [&](const kv_entry& c) { return c.key == k; });
    poke();
}

void key_hub::prune_dead_contenders() {
    for (const auto& c : contenders_) {
        if (!c.session.empty() || !pruning_.insert(c.key).second)
            continue;
        // CAS: only the dead key we saw, never one written again since.
        auto prune = [](client consul, std::string k,
                        std::uint64_t index) -> asio::awaitable<void> {
            co_await consul.async_kv_delete(k, kv_delete_options{}.with_cas(index),
                                            asio::as_tuple(asio::use_awaitable));
        };
        asio::co_spawn(consul.get_executor(), prune(consul, c.key, c.modify_index),
                       [](std::exception_ptr) {});
    }
}

void key_hub::forget() {
    known_ = false;
    stop_read(); // the query reads afresh at once
    poke();
}

void key_hub::stop_read() {
    if (!reading_ || read_stopped_)
        return;
    read_stopped_ = true;
    read_stop_.emit(asio::cancellation_type::terminal);
}

namespace {
struct subscription {
    std::shared_ptr<key_hub> hub;
    explicit subscription(std::shared_ptr<key_hub> h)
        : hub(std::move(h)) {}
    ~subscription() { hub->unsubscribe_for_handle(); }
};
} // namespace

std::shared_ptr<void> key_hub::subscribe() {
    ++subscribers_;
    subscribers_changed_.notify_all();
    if (!query_running_) {
        query_running_ = true;
        asio::co_spawn(consul.get_executor(), run_query(shared_from_this()),
                       [](std::exception_ptr) {});
    }
    return std::make_shared<subscription>(shared_from_this());
}

void key_hub::unsubscribe_for_handle() {
    --subscribers_;
    subscribers_changed_.notify_all();
    if (subscribers_ > 0 || !reading_)
        return;
    // The last user left during a read: end it after the grace period unless someone
    // subscribes meanwhile.
    idle_timer_.expires_after(idle_grace);
    idle_timer_.async_wait([weak = weak_from_this()](const error_code& ec) {
        auto hub = weak.lock();
        if (!ec && hub && hub->subscribers_ == 0)
            hub->stop_read();
    });
}

asio::awaitable<void> key_hub::idle_for_a_while() {
    for (;;) {
        while (subscribers_ > 0)
            co_await subscribers_changed_.wait(clock::time_point::max());
        co_await subscribers_changed_.wait(clock::now() + idle_grace);
        if (subscribers_ == 0)
            co_return;
    }
}

asio::awaitable<std::pair<error_code, key_hub::read_result>> key_hub::read(query_options q) {
    using result = std::pair<error_code, read_result>;
    read_result out;
    auto token =
        asio::bind_cancellation_slot(read_stop_.slot(), asio::as_tuple(asio::use_awaitable));
    if (!settings_.fair) {
        auto [ec, r] = co_await consul.async_kv_get(key, q, token);
        out.entry = std::move(r.entry);
        out.index = r.meta.index;
        co_return result{ec, std::move(out)};
    }
    // Fair mode: the key and its contender keys in one blocking list of the key's prefix
    // (which may also hold unrelated keys that merely start with the same characters).
    auto [ec, r] = co_await consul.async_kv_list(key, q, token);
    const auto queue = queue_prefix();
    for (auto& e : r.entries) {
        if (e.key == key)
            out.entry = std::move(e);
        else if (e.key.compare(0, queue.size(), queue) == 0)
            out.contenders.push_back(std::move(e));
    }
    out.index = r.meta.index;
    co_return result{ec, std::move(out)};
}

asio::awaitable<void> key_hub::run_query(std::shared_ptr<key_hub> self) {
    struct running_flag {
        bool& flag;
        ~running_flag() { flag = false; }
    } running{query_running_};
    for (;;) {
        // A transaction of ours in flight is about to change the key: reading now would
        // only see the state it replaces (and cost a request that wakes again at once).
        while (attempt_in_flight && subscribers_ > 0)
            co_await changed.wait(clock::time_point::max());
        if (subscribers_ == 0) {
            co_await subscribers_changed_.wait(clock::now() + idle_grace);
            if (subscribers_ == 0)
                co_return;
            continue;
        }

        const bool blocking = known_ && failures_ == 0;
        auto q = blocking ? query_options::blocking(index_, settings_.wait) : query_options{};
        reading_ = true;
        auto [ec, r] = co_await read(q);
        reading_ = false;
        if (std::exchange(read_stopped_, false))
            continue; // forgotten (read afresh), or idle (the loop's top ends the query)
        if (ec) {
            // Counted for the lease monitors' retry budget; waiters simply wait.
            ++failures_;
            poke();
            // As Go's monitor: a fixed wait between tries, so that the retry budget of the
            // lease monitors (monitor_retries × monitor_retry_wait) is an outage duration.
            auto pause = detail::sleep_for(settings_.monitor_retry_wait);
            if ((co_await (std::move(pause) || idle_for_a_while())).index() == 1)
                co_return;
            continue;
        }
        saw_read(std::move(r.entry), std::move(r.contenders), r.index);
        if (!queue.empty()) {
            // Let the waiter just woken run first: its attempt marks itself in flight (the
            // next read then waits for it) and gets the connection this read just freed,
            // instead of the next read taking it and the attempt opening another.
            co_await asio::post(consul.get_executor(), asio::deferred);
        }
    }
    (void)self; // keeps the hub alive while the query runs
}

} // namespace conclave::detail
