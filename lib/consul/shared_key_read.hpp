// SPDX-License-Identifier: BSL-1.0
// Blocking reads of single keys that share one blocking query on their folder.
//
// Why: every blocking query holds a connection for up to its whole wait, and Consul accepts
// at most limits.http_max_conns_per_client (200) connections from an address. A process
// watching or waiting on more keys than its blocking queries' share of connections would
// leave the extra reads queued for minutes, and their changes unheard. So once that share
// is taken (http::lane::crowded), a blocking read of `dir/key` joins one blocking recursive
// read of `dir/`, shared by every such read under it: each reader is answered when its own
// key changes, as Consul would answer it, and the folder's query holds one connection.
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

/// A blocking read (q.index > 0) of `key` (no leading '/'), answered from the blocking
/// recursive read of `folder` that `c` shares among its readers under that folder. The same
/// result, index and errors as a GET of the key; cancellation as for any read.
asio::awaitable<std::pair<error_code, kv_get_result>>
shared_key_read(std::shared_ptr<client_impl> c, std::string key, std::string folder,
                query_options q);

} // namespace conclave::detail
