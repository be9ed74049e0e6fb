// SPDX-License-Identifier: BSL-1.0
// list_hub: a shared_query that reads the keys under one prefix (one recursive list), and
// whose users' own writes there hold the query while they are in flight. The base of the
// group's hub (its members under the group's prefix) and of the read-write lock's (its
// contenders under the lock's key).
#pragma once

#include "recipes/common/shared_query.hpp"

#include <conclave/client.hpp>
#include <conclave/consul/kv.hpp>

#include <memory>
#include <string>
#include <vector>

namespace conclave::detail {

class list_hub : public shared_query {
public:
    /// A write of ours under the prefix is in flight while the returned handle lives: the
    /// query waits for it (its outcome will change what a read would see), and everyone is
    /// woken when it ends.
    std::shared_ptr<void> writing();

protected:
    /// A hub that lists `listed` (recursively, as given).
    list_hub(client c, std::string registry_name, std::string listed, settings s);

    /// What a read that is news (accept_read) listed, to keep; everyone is woken after.
    virtual void store(std::vector<kv_entry> entries) = 0;

private:
    bool transaction_in_flight() const override { return writes_in_flight_ > 0; }
    asio::awaitable<error_code> read_once(query_options q, asio::cancellation_slot stop) final;
    // Nobody followed the prefix since: it may have changed.
    void query_stopped() override { mark_unknown(); }

    const std::string listed_;
    unsigned writes_in_flight_ = 0;
};

} // namespace conclave::detail
