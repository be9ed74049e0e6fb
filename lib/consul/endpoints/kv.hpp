// SPDX-License-Identifier: BSL-1.0
// The KV endpoints as (build, decode) pairs: /v1/kv/<key> GET (one key, raw, recurse,
// keys), PUT and DELETE. Sent by detail::call (consul/endpoint.hpp); a blocking read of one
// key goes through read_key (consul/read_key.hpp), which may share its folder's query.
#pragma once

#include "consul/client_impl.hpp"

#include <conclave/consul/kv.hpp>

#include <string>
#include <utility>

namespace conclave::detail::endpoint {

/// GET /v1/kv/<key>: one entry, or none for a 404.
struct kv_get {
    kv_get(std::string key, query_options query)
        : key(std::move(key))
        , query(std::move(query)) {}

    using result = kv_get_result;
    std::string key;
    query_options query;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// GET /v1/kv/<key>?raw: the value's bytes as they are stored.
struct kv_get_raw {
    kv_get_raw(std::string key, query_options query)
        : key(std::move(key))
        , query(std::move(query)) {}

    using result = kv_raw_result;
    std::string key;
    query_options query;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// GET /v1/kv/<prefix>?recurse: every entry under the prefix.
struct kv_list {
    kv_list(std::string prefix, query_options query)
        : prefix(std::move(prefix))
        , query(std::move(query)) {}

    using result = kv_list_result;
    std::string prefix;
    query_options query;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// GET /v1/kv/<prefix>?keys: the key names under the prefix.
struct kv_keys {
    kv_keys(std::string prefix, kv_keys_options options)
        : prefix(std::move(prefix))
        , options(std::move(options)) {}

    using result = kv_keys_result;
    std::string prefix;
    kv_keys_options options;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// PUT /v1/kv/<key>, with at most one of cas, acquire and release: whether it was written.
struct kv_put {
    kv_put(std::string key, std::string value, kv_put_options options)
        : key(std::move(key))
        , value(std::move(value))
        , options(std::move(options)) {}

    using result = bool;
    std::string key;
    std::string value;
    kv_put_options options;

    /// Moves `value` into the request body: build a put once.
    error_code build(api_call& call);
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// DELETE /v1/kv/<key>: whether it was deleted (a failed cas says false).
struct kv_delete {
    kv_delete(std::string key, kv_delete_options options)
        : key(std::move(key))
        , options(std::move(options)) {}

    using result = bool;
    std::string key;
    kv_delete_options options;

    error_code build(api_call& call) const;
    std::pair<error_code, result> decode(const api_call& call, api_reply& reply) const;
};

/// Consul's answer to a write, a bare JSON true or false.
std::pair<error_code, bool> decode_write_reply(const api_call& call, const api_reply& reply);

} // namespace conclave::detail::endpoint
