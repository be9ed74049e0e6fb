// SPDX-License-Identifier: BSL-1.0
// rw_hub: the read-write lock's state as read by the shared list query.
#include "recipes/rwlock/rw_hub.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace conclave::detail {

namespace {

std::string registry_name(const std::string& key) {
    return "rwlock-hub:" + key;
}

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

} // namespace

std::shared_ptr<rw_hub> rw_hub::of(const client& c, const std::string& key, settings s) {
    return find_or_make<rw_hub>(c, registry_name(key),
                                [&] { return std::make_shared<rw_hub>(c, key, s); });
}

rw_hub::rw_hub(client c, std::string k, settings s)
    : shared_query(std::move(c), registry_name(k), s)
    , key(std::move(k))
    , sequence_key(key + "/.rwlock") {}

void rw_hub::prune_dead_contenders() {
    for (const auto& c : contenders_) {
        if (c.live() || !pruning_.insert(c.key).second)
            continue;
        delete_in_background(consul, c.key, c.modify_index);
    }
}

void rw_hub::saw_write(const kv_entry& e) {
    if (known() && e.modify_index >= state_index()) {
        if (auto at = rw_find(contenders_, e.key)) {
            auto& c = contenders_[*at];
            c.session = e.session;
            c.mode = e.flags == rw_write_flags ? rw_mode::write : rw_mode::read;
            c.modify_index = e.modify_index;
            accept_write(e.modify_index);
        }
    }
    poke();
}

void rw_hub::contender_gone(const std::string& k) {
    std::erase_if(contenders_, [&](const rw_contender& c) { return c.key == k; });
    poke();
}

asio::awaitable<error_code> rw_hub::read_once(query_options q, asio::cancellation_slot stop) {
    auto token = asio::bind_cancellation_slot(stop, asio::as_tuple(asio::use_awaitable));
    // The key's prefix: the key itself and `<key>/.lock` (another recipe's), the sequence
    // key and the contenders (and keys that merely start with the same characters).
    auto [ec, r] = co_await consul.async_kv_list(key, q, token);
    if (ec || !accept_read(r.meta.index))
        co_return ec;
    contenders_.clear();
    sequence_index_ = 0;
    conflict_.clear();
    const auto prefix = contender_prefix();
    for (auto& e : r.entries) {
        if (e.key == key && e.flags == lock_flag_value)
            conflict_ = "a lock uses \"" + key + "\"";
        else if (e.key == key + "/.lock" &&
                 (e.flags == lock_flag_value || e.flags == semaphore_flag_value))
            conflict_ = "a semaphore or consul lock uses \"" + e.key + "\"";
        else if (e.key == sequence_key) {
            if (e.flags != rw_sequence_flags)
                conflict_ = "\"" + e.key + "\" has other flags";
            sequence_index_ = e.modify_index;
        } else if (starts_with(e.key, prefix)) {
            if (e.flags != rw_read_flags && e.flags != rw_write_flags) {
                conflict_ = "\"" + e.key + "\" has other flags";
                continue;
            }
            contenders_.emplace_back(std::move(e.key), std::move(e.session),
                                     e.flags == rw_write_flags ? rw_mode::write : rw_mode::read,
                                     e.create_index, e.modify_index);
        }
    }
    std::sort(contenders_.begin(), contenders_.end(),
              [](const rw_contender& a, const rw_contender& b) {
                  return a.create_index < b.create_index;
              });
    std::erase_if(pruning_, [&](const std::string& k) { return !rw_find(contenders_, k); });
    poke();
    co_return ec;
}

} // namespace conclave::detail
