// SPDX-License-Identifier: BSL-1.0
// key_query: the blocking read of one key that every local waiter of one recipe kind on that
// key shares (one query per client, kind and key, however many waiters and objects): a
// counter's async_wait_change, a latch's or a barrier's async_wait.
#pragma once

#include "recipes/common/shared_query.hpp"

#include <conclave/client.hpp>
#include <conclave/consul/kv.hpp>

#include <memory>
#include <optional>
#include <string>

namespace conclave::detail {

class key_query final : public shared_query {
public:
    /// The query of `key` on `c` for recipes of `kind` ("counter", "latch", ...), shared by
    /// every object of that kind, client and key.
    static std::shared_ptr<key_query> of(const client& c, const std::string& kind,
                                         const std::string& key, settings s);

    key_query(client c, std::string registry_name, std::string key, settings s);

    const std::string key;

    /// The key when known() (empty optional: absent).
    const std::optional<kv_entry>& entry() const noexcept { return entry_; }
    /// The key's ModifyIndex as known (0: absent).
    std::uint64_t key_index() const noexcept { return entry_ ? entry_->modify_index : 0; }
    /// Reads accepted so far: a waiter that saw two more knows a read sent after it came.
    std::uint64_t reads() const noexcept { return reads_; }

private:
    // Nothing of ours to wait for: the recipes on one key write single check-and-set
    // requests, which the blocking read sees like anyone else's.
    bool transaction_in_flight() const override { return false; }
    asio::awaitable<error_code> read_once(query_options q, asio::cancellation_slot stop) override;
    // Nobody followed the key since: it may have changed.
    void query_stopped() override { mark_unknown(); }

    std::optional<kv_entry> entry_;
    std::uint64_t reads_ = 0;
};

} // namespace conclave::detail
