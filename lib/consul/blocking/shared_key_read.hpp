// SPDX-License-Identifier: BSL-1.0
// Blocking reads of single keys that share one blocking query on their folder.
//
// Why: every blocking query holds a connection for up to its whole wait, and Consul accepts
// at most limits.http_max_conns_per_client (200) connections from an address. A process
// watching or waiting on more keys than its blocking queries' share of connections would
// leave the extra reads queued for minutes, and their changes unheard. So once that share
// is taken (http::lane::crowded), a blocking read of `dir/key` joins one blocking recursive
// read of `dir/` (everything under it: Consul matches prefixes, not path segments), shared by
// every such read: each reader is answered when its own key changes, as Consul would answer
// it, and the folder's query holds one connection.
//
// The cost: each change under the folder brings the whole folder back once (not once per
// reader), and a reader of a missing key wakes whenever anything in the folder changes
// (its next read blocks again: callers of blocking queries handle such wake-ups, which
// Consul has too).
#pragma once

#include "consul/client_impl.hpp"

#include <conclave/consul/kv.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace conclave::detail {

/// The folder a blocking read of `key` (no leading '/') can share: the key up to and with
/// its last '/'. None for a key at the top level: its folder would be the whole store.
std::optional<std::string_view> sharing_folder(std::string_view key);

/// How a shared read ended.
struct shared_read {
    enum class outcome {
        answered,      ///< `ec` and `result` are the read's
        wait_over,     ///< no change in the reader's wait: the caller reads the key as it is
        not_shareable, ///< the folder cannot be read as a whole: the caller reads alone
    };
    outcome how = outcome::answered;
    error_code ec;
    kv_get_result result;
};

/// A blocking read (q.index > 0) of `key` (no leading '/') from the blocking recursive read
/// of `folder` that `c` shares among its readers under that folder: answered when the key's
/// ModifyIndex (for a missing key, the folder's index) passes q.index, with that index, or
/// when the query fails, with its error (the diagnostics name the key); cancellation as
/// for any read.
asio::awaitable<shared_read> shared_key_read(std::shared_ptr<client_impl> c, std::string key,
                                             std::string folder, query_options q);

/// Whether blocking reads under `folder` may share (false once its recursive read was
/// refused or too large: its readers then read alone).
bool folder_shareable(const client_impl& c, const std::string& folder);

} // namespace conclave::detail
