// SPDX-License-Identifier: BSL-1.0
// key_hub: the key's state as read by the shared query and written by local transactions,
// and fair mode's contender keys.
#include "recipes/lock/key_hub.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace conclave::detail {

namespace {

std::string registry_name(const std::string& key, bool fair) {
    return (fair ? "lock-hub:fair:" : "lock-hub:") + key;
}

} // namespace

std::shared_ptr<key_holder> key_holder::of(const client& c, const std::string& key) {
    // (Kept alive by the key's hubs.)
    return shared_query::find_or_make<key_holder>(c, "lock-holder:" + key,
                                                  [] { return std::make_shared<key_holder>(); });
}

void key_holder::add(const std::shared_ptr<key_hub>& hub) {
    std::erase_if(hubs, [](const std::weak_ptr<key_hub>& h) { return h.expired(); });
    hubs.push_back(hub);
}

void key_holder::poke_all() {
    for (const auto& h : hubs)
        if (auto hub = h.lock())
            hub->poke();
}

std::shared_ptr<key_hub> key_hub::of(const client& c, const std::string& key, settings s) {
    return find_or_make<key_hub>(c, registry_name(key, s.fair), [&] {
        auto hub = std::make_shared<key_hub>(c, key, s);
        hub->holder->add(hub);
        return hub;
    });
}

key_hub::key_hub(client c, std::string k, settings s)
    : shared_query(std::move(c), registry_name(k, s.fair), s)
    , key(std::move(k))
    , holder(key_holder::of(consul, key)) {}

void key_hub::saw_write(const kv_entry& e) {
    if (known() && e.modify_index < state_index())
        return; // we already know a later state
    accept_write(e.modify_index);
    entry_ = e;
    poke();
}

bool key_hub::first_in_line(const hub_waiter& w) const {
    if (w.contender_key.empty() || state_index() < w.contender_index)
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
        delete_in_background(consul, c.key, c.modify_index);
    }
}

asio::awaitable<error_code> key_hub::read_once(query_options q, asio::cancellation_slot stop) {
    auto token = asio::bind_cancellation_slot(stop, asio::as_tuple(asio::use_awaitable));
    if (!fair()) {
        auto [ec, r] = co_await consul.async_kv_get(key, q, token);
        if (!ec && accept_read(r.meta.index)) {
            entry_ = std::move(r.entry);
            poke();
        }
        co_return ec;
    }
    // Fair mode: the key and its contender keys in one blocking list of the key's prefix
    // (which may also hold unrelated keys that merely start with the same characters).
    auto [ec, r] = co_await consul.async_kv_list(key, q, token);
    if (ec || !accept_read(r.meta.index))
        co_return ec;
    entry_.reset();
    contenders_.clear();
    const auto queue_keys = queue_prefix();
    for (auto& e : r.entries) {
        if (e.key == key)
            entry_ = std::move(e);
        else if (e.key.compare(0, queue_keys.size(), queue_keys) == 0)
            contenders_.push_back(std::move(e));
    }
    std::sort(contenders_.begin(), contenders_.end(),
              [](const kv_entry& a, const kv_entry& b) { return a.create_index < b.create_index; });
    std::erase_if(pruning_, [&](const std::string& k) {
        return std::none_of(contenders_.begin(), contenders_.end(),
                            [&](const kv_entry& c) { return c.key == k; });
    });
    poke();
    co_return ec;
}

asio::awaitable<void> key_hub::after_read() {
    if (!queue.empty()) {
        // Let the waiter just woken run first: its attempt marks itself in flight (the
        // next read then waits for it) and gets the connection this read just freed,
        // instead of the next read taking it and the attempt opening another.
        co_await asio::post(consul.get_executor(), asio::deferred);
    }
}

} // namespace conclave::detail
