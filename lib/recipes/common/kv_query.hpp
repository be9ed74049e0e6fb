// SPDX-License-Identifier: BSL-1.0
// kv_query: the blocking read of one key (key_query) or of one prefix (prefix_query) that
// every local waiter of one recipe kind on it shares (one query per client, kind and key or
// prefix, however many waiters and objects): a counter's async_wait_change, a latch's or a
// barrier's async_wait read a key; a double barrier's enters and leaves, a prefix.
#pragma once

#include "recipes/common/shared_query.hpp"

#include <conclave/client.hpp>
#include <conclave/consul/kv.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace conclave::detail {

/// How a key_query reads: GET of the key, which it keeps (an empty optional: absent).
struct key_read {
    using value_type = std::optional<kv_entry>;
};

/// How a prefix_query reads: the keys under the prefix (listed recursively, as given),
/// sorted by key.
struct prefix_read {
    using value_type = std::vector<kv_entry>;
};

template <class Read>
class kv_query final : public shared_query {
public:
    /// The query of `target` (the key or the prefix) on `c` for recipes of `kind`
    /// ("counter", "latch", ...), shared by every object of that kind, client and target.
    static std::shared_ptr<kv_query> of(const client& c, const std::string& kind,
                                        const std::string& target, settings s);

    kv_query(client c, std::string registry_name, std::string target, settings s);

    /// The key or the prefix.
    const std::string target;

    /// What the last read accepted got, when known() (see key_read, prefix_read).
    const typename Read::value_type& value() const noexcept { return value_; }
    /// Reads accepted so far: a waiter that saw two more knows a read sent after it came.
    std::uint64_t reads() const noexcept { return reads_; }

private:
    // Nothing of ours to wait for: the recipes' writes are single requests (check-and-set
    // ones on a key), which the blocking read sees like anyone else's.
    bool transaction_in_flight() const override { return false; }
    asio::awaitable<error_code> read_once(query_options q, asio::cancellation_slot stop) override;
    // Nobody followed the key or prefix since: it may have changed.
    void query_stopped() override { mark_unknown(); }

    typename Read::value_type value_{};
    std::uint64_t reads_ = 0;
};

using key_query = kv_query<key_read>;
using prefix_query = kv_query<prefix_read>;

extern template class kv_query<key_read>;
extern template class kv_query<prefix_read>;

/// The key's ModifyIndex as `q` knows it (0: absent).
inline std::uint64_t key_index(const key_query& q) noexcept {
    return q.value() ? q.value()->modify_index : 0;
}

} // namespace conclave::detail
