// semaphore_hub: the registry per client, the shared blocking list of the prefix and the
// state it keeps.
#include "consul/client_impl.hpp"
#include "recipes/deadline.hpp"
#include "recipes/semaphore_hub.hpp"
#include "recipes/semaphore_record.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace conclave::detail {

using namespace asio::experimental::awaitable_operators;

namespace {

std::string registry_name(const std::string& prefix) {
    return "semaphore-hub:" + prefix;
}

// After the last user left, the query lingers this long in case another comes (a holder
// that releases and acquires again) before it is cancelled.
constexpr auto idle_grace = std::chrono::milliseconds{100};

} // namespace

std::shared_ptr<semaphore_hub> semaphore_hub::of(const client& c, const std::string& prefix,
                                                 settings s) {
    auto& registry = client_access::impl(c).shared_state;
    auto& slot = registry[registry_name(prefix)];
    if (auto existing = std::static_pointer_cast<semaphore_hub>(slot.lock()))
        return existing;
    auto hub = std::make_shared<semaphore_hub>(c, prefix, s);
    slot = hub;
    return hub;
}

semaphore_hub::semaphore_hub(client c, std::string p, settings s)
    : consul(std::move(c))
    , prefix(std::move(p))
    , lock_key(join_key(prefix, ".lock"))
    , settings_(s) {}

semaphore_hub::~semaphore_hub() {
    auto& registry = client_access::impl(consul).shared_state;
    auto it = registry.find(registry_name(prefix));
    if (it != registry.end() && it->second.expired())
        registry.erase(it);
}

std::string semaphore_hub::contender_key(const std::string& session) const {
    return join_key(prefix, session);
}

const kv_entry* semaphore_hub::lock_entry() const {
    for (const auto& e : entries_)
        if (e.key == lock_key)
            return &e;
    return nullptr;
}

void semaphore_hub::saw_write(const kv_entry& lock, const std::vector<std::string>& added_sessions,
                              const std::string& deleted_contender) {
    if (!known_ || lock.modify_index < state_index_) {
        // Nothing to patch (or we already know a later state): the query brings the news.
        poke();
        return;
    }
    std::erase_if(entries_, [&](const kv_entry& e) {
        return e.key == lock_key || e.key == deleted_contender;
    });
    entries_.push_back(lock);
    // The sessions just added hold their contender keys (written before they were
    // enqueued), possibly after our last read: without them, the next CAS built on this
    // state would prune them as dead.
    for (const auto& s : added_sessions) {
        const auto k = contender_key(s);
        const bool listed = std::any_of(entries_.begin(), entries_.end(),
                                        [&](const kv_entry& e) { return e.key == k; });
        if (!listed) {
            kv_entry e;
            e.key = k;
            e.session = s;
            e.flags = semaphore_flag_value;
            entries_.push_back(std::move(e));
        }
    }
    state_index_ = lock.modify_index;
    index_ = std::max(index_, lock.modify_index);
    poke();
}

void semaphore_hub::saw_read(std::vector<kv_entry> entries, std::uint64_t index) {
    const bool went_back = index < read_index_;
    read_index_ = index;
    failures_ = 0;
    if (!went_back && known_ && index < state_index_) {
        // Older than a local write we already know about: keep ours, block from there.
        poke(); // the failure count was reset
        return;
    }
    // A read that went backwards (snapshot restore, restarted agent) is the new truth.
    known_ = true;
    entries_ = std::move(entries);
    state_index_ = index;
    index_ = index;
    poke();
}

void semaphore_hub::forget() {
    known_ = false;
    ++restarts_;
    restart_.notify_all();
    poke();
}

namespace {
struct subscription {
    std::shared_ptr<semaphore_hub> hub;
    explicit subscription(std::shared_ptr<semaphore_hub> h)
        : hub(std::move(h)) {}
    ~subscription() { hub->unsubscribe_for_handle(); }
};
} // namespace

std::shared_ptr<void> semaphore_hub::subscribe() {
    ++subscribers_;
    subscribers_changed_.notify_all();
    if (!query_running_) {
        query_running_ = true;
        asio::co_spawn(consul.get_executor(), run_query(shared_from_this()),
                       [](std::exception_ptr) {});
    }
    return std::make_shared<subscription>(shared_from_this());
}

void semaphore_hub::unsubscribe_for_handle() {
    --subscribers_;
    subscribers_changed_.notify_all();
}

asio::awaitable<void> semaphore_hub::idle_for_a_while() {
    for (;;) {
        while (subscribers_ > 0)
            co_await subscribers_changed_.wait(clock::time_point::max());
        co_await subscribers_changed_.wait(clock::now() + idle_grace);
        if (subscribers_ == 0)
            co_return;
    }
}

asio::awaitable<void> semaphore_hub::restart_requested() {
    const auto generation = restarts_;
    while (generation == restarts_)
        co_await restart_.wait(clock::time_point::max());
}

asio::awaitable<std::pair<error_code, kv_list_result>> semaphore_hub::read(query_options q) {
    auto [ec, r] = co_await consul.async_kv_list(join_key(prefix, ""), std::move(q),
                                                 asio::as_tuple(asio::use_awaitable));
    co_return std::pair<error_code, kv_list_result>{ec, std::move(r)};
}

asio::awaitable<void> semaphore_hub::run_query(std::shared_ptr<semaphore_hub> self) {
    // Once the query stops, nothing keeps the state fresh: a release must not trust it.
    struct running_flag {
        semaphore_hub& hub;
        ~running_flag() {
            hub.query_running_ = false;
            hub.known_ = false;
        }
    } running{*this};
    for (;;) {
        // A CAS of ours in flight is about to change `.lock`: reading now would only see
        // the state it replaces.
        while (attempts_in_flight > 0 && subscribers_ > 0)
            co_await changed.wait(clock::time_point::max());
        if (subscribers_ == 0) {
            co_await subscribers_changed_.wait(clock::now() + idle_grace);
            if (subscribers_ == 0)
                co_return;
            continue;
        }

        const bool blocking = known_ && failures_ == 0;
        auto q = blocking ? query_options::blocking(index_, settings_.wait) : query_options{};
        auto outcome = co_await (read(q) || idle_for_a_while() || restart_requested());
        if (outcome.index() == 1)
            co_return; // nobody needs it any more
        if (outcome.index() == 2)
            continue; // someone forgot the state: read it afresh now
        auto [ec, r] = std::get<0>(std::move(outcome));
        if (ec) {
            // Counted for the permit monitors' retry budget; waiters simply wait.
            ++failures_;
            poke();
            // As Go's monitor: a fixed wait between tries, so that the monitors' retry
            // budget (monitor_retries × monitor_retry_wait) is an outage duration.
            auto pause = detail::sleep_for(settings_.monitor_retry_wait);
            if ((co_await (std::move(pause) || idle_for_a_while())).index() == 1)
                co_return;
            continue;
        }
        saw_read(std::move(r.entries), r.meta.index);
    }
    (void)self; // keeps the hub alive while the query runs
}

} // namespace conclave::detail
