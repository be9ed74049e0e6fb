// SPDX-License-Identifier: BSL-1.0
// A read of one key that, when blocking on a crowded lane, shares its folder's query.
#pragma once

#include "consul/client_impl.hpp"
#include "consul/endpoints/kv.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <utility>

namespace conclave::detail {

/// call(c, read) (consul/endpoint.hpp), except for a blocking read (index > 0) when the
/// blocking queries hold all the connections they may: then the read joins the blocking
/// query its key's folder shares among such readers (consul/blocking/shared_key_read.hpp).
/// The public read of a key and the watches' come here; the decision is made when the
/// read runs, so that reads started together see the lane fill up.
asio::awaitable<std::pair<error_code, kv_get_result>> read_key(std::shared_ptr<client_impl> c,
                                                               endpoint::kv_get read);

/// read_key() on the client behind a handle, for the recipes.
asio::awaitable<std::pair<error_code, kv_get_result>> read_key(const client& c,
                                                               endpoint::kv_get read);

} // namespace conclave::detail
