// SPDX-License-Identifier: BSL-1.0
// prefix_query: the blocking list of one prefix that every local waiter of one recipe kind
// on that prefix shares (one query per client, kind and prefix): a double barrier's enters
// and leaves.
#pragma once

#include "recipes/common/shared_query.hpp"

#include <conclave/client.hpp>
#include <conclave/consul/kv.hpp>

#include <memory>
#include <string>
#include <vector>

namespace conclave::detail {

class prefix_query final : public shared_query {
public:
    /// The query of `prefix` (listed recursively, as given) on `c` for recipes of `kind`.
    static std::shared_ptr<prefix_query> of(const client& c, const std::string& kind,
                                            const std::string& prefix, settings s);

    prefix_query(client c, std::string registry_name, std::string prefix, settings s);

    const std::string prefix;

    /// The keys under the prefix when known(), sorted by key.
    const std::vector<kv_entry>& entries() const noexcept { return entries_; }
    /// Reads accepted so far: a waiter that saw two more knows a read sent after it came.
    std::uint64_t reads() const noexcept { return reads_; }

private:
    // The recipes' writes are single requests, which the blocking read sees.
    bool transaction_in_flight() const override { return false; }
    asio::awaitable<error_code> read_once(query_options q, asio::cancellation_slot stop) override;
    void query_stopped() override { mark_unknown(); }

    std::vector<kv_entry> entries_;
    std::uint64_t reads_ = 0;
};

} // namespace conclave::detail
