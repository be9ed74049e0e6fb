// key_hub: the registry per client, the shared blocking query and the state it keeps.
#include "consul/client_impl.hpp"
#include "recipes/deadline.hpp"
#include "recipes/key_hub.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace conclave::detail {

using namespace asio::experimental::awaitable_operators;

namespace {

std::string registry_name(const std::string& key) {
    return "lock-hub:" + key;
}

// After the last user left, the query lingers this long in case another comes (a holder
// that releases and acquires again) before it is cancelled.
constexpr auto idle_grace = std::chrono::milliseconds{100};

} // namespace

std::shared_ptr<key_hub> key_hub::of(const client& c, const std::string& key, settings s) {
    auto& registry = client_access::impl(c).shared_state;
    auto& slot = registry[registry_name(key)];
    if (auto existing = std::static_pointer_cast<key_hub>(slot.lock()))
        return existing;
    auto hub = std::make_shared<key_hub>(c, key, s);
    slot = hub;
    return hub;
}

key_hub::key_hub(client c, std::string k, settings s)
    : consul(std::move(c))
    , key(std::move(k))
    , settings_(s) {}

key_hub::~key_hub() {
    auto& registry = client_access::impl(consul).shared_state;
    auto it = registry.find(registry_name(key));
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
    changed.notify_all();
}

void key_hub::saw_read(std::optional<kv_entry> e, std::uint64_t index) {
    const bool went_back = index < read_index_;
    read_index_ = index;
    failures_ = 0;
    if (!went_back && known_ && index < state_index_) {
        // Older than a local write we already know about: keep ours, block from there.
        changed.notify_all(); // the failure count was reset
        return;
    }
    // A read that went backwards (snapshot restore, restarted agent) is the new truth: the
    // query blocks from the index Consul gives now, not from ours.
    known_ = true;
    entry_ = std::move(e);
    state_index_ = index;
    index_ = index;
    changed.notify_all();
}

void key_hub::forget() {
    known_ = false;
    ++restarts_;
    restart_.notify_all();
    changed.notify_all();
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

asio::awaitable<void> key_hub::restart_requested() {
    const auto generation = restarts_;
    while (generation == restarts_)
        co_await restart_.wait(clock::time_point::max());
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
        auto get = consul.async_kv_get(key, q, asio::as_tuple(asio::use_awaitable));
        auto outcome = co_await (std::move(get) || idle_for_a_while() || restart_requested());
        if (outcome.index() == 1)
            co_return; // nobody needs it any more
        if (outcome.index() == 2)
            continue; // someone forgot the state: read it afresh now
        auto [ec, r] = std::get<0>(std::move(outcome));
        if (ec) {
            // Counted for the lease monitors' retry budget; waiters simply wait.
            ++failures_;
            changed.notify_all();
            // As Go's monitor: a fixed wait between tries, so that the retry budget of the
            // lease monitors (monitor_retries × monitor_retry_wait) is an outage duration.
            auto pause = detail::sleep_for(settings_.monitor_retry_wait);
            if ((co_await (std::move(pause) || idle_for_a_while())).index() == 1)
                co_return;
            continue;
        }
        saw_read(std::move(r.entry), r.meta.index);
    }
    (void)self; // keeps the hub alive while the query runs
}

} // namespace conclave::detail
