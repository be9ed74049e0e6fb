// SPDX-License-Identifier: BSL-1.0
// The state of a recipe object on one key (a lock's, a read-write lock's).
#pragma once

#include "recipes/common/shared_query.hpp"

#include <conclave/client.hpp>

#include <memory>
#include <string>
#include <utility>

namespace conclave::detail {

/// A recipe object's client, key and options, and the hub (`Hub`, a shared_query) it shares
/// with every object of its client on that key: the key's state, one blocking query, the
/// queue of local waiters.
template <class Options, class Hub>
struct keyed_state {
    keyed_state(client c, std::string k, Options o, typename Hub::settings s)
        : consul(std::move(c))
        , key(std::move(k))
        , opts(std::move(o))
        , hub(Hub::of(consul, key, s)) {}
    /// With a hub found by the caller (one shared by several recipe kinds: a key_query).
    keyed_state(client c, std::string k, Options o, std::shared_ptr<Hub> h)
        : consul(std::move(c))
        , key(std::move(k))
        , opts(std::move(o))
        , hub(std::move(h)) {}
    ~keyed_state() { shared_query::let_go(hub); }
    keyed_state(const keyed_state&) = delete;
    keyed_state& operator=(const keyed_state&) = delete;

    client consul;
    std::string key;
    Options opts;
    std::shared_ptr<Hub> hub;
};

} // namespace conclave::detail
