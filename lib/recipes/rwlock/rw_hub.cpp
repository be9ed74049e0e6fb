// SPDX-License-Identifier: BSL-1.0
// rw_hub: the read-write lock's state as read by the shared list query.
#include "recipes/rwlock/rw_hub.hpp"

#include <algorithm>

namespace conclave::detail {

namespace {

std::string registry_name(const std::string& key) {
    return "rwlock-hub:" + key;
}

} // namespace

std::shared_ptr<rw_hub> rw_hub::of(const client& c, const std::string& key, settings s) {
    return find_or_make<rw_hub>(c, registry_name(key),
                                [&] { return std::make_shared<rw_hub>(c, key, s); });
}

// The list is of the key's prefix: the key itself and `<key>/.lock` (another recipe's), the
// sequence key and the contenders (and keys that merely start with the same characters).
rw_hub::rw_hub(client c, std::string k, settings s)
    : list_hub(std::move(c), registry_name(k), k, s)
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

void rw_hub::store(std::vector<kv_entry> entries) {
    auto reading = read_rw_prefix(key, std::move(entries));
    contenders_ = std::move(reading.contenders);
    sequence_index_ = reading.sequence_index;
    conflict_ = std::move(reading.conflict);
    std::erase_if(pruning_, [&](const std::string& k) { return !rw_find(contenders_, k); });
}

} // namespace conclave::detail
