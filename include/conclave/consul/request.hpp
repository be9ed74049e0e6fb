// SPDX-License-Identifier: BSL-1.0
/// \file
/// What every request to Consul's HTTP API takes and reports: read and write options,
/// consistency modes, and the index and leader information of a read.
///
/// About conclave's option types (these, and those of kv.hpp, session.hpp and txn.hpp):
/// each declares a default constructor, so none is an aggregate and designated initializers
/// (`{.index = 5}`) do not compile. That is on purpose: g++ 12 destroys an aggregate temporary
/// twice when it appears in a co_await expression (GCC PR 107288 family), e.g.
/// `co_await c.async_kv_get(k, {.index = 5})` corrupts the heap. Set fields by name instead:
/// `query_options{}.with_index(5)`, or on a named object. Each `with_*` call sets the field
/// of its name and returns the object, so that calls chain.
#pragma once

#include <conclave/detail/options_base.hpp>
#include <conclave/error.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace conclave {

/// How up to date a read must be: Consul's consistency modes.
enum class consistency {
    default_mode, ///< leader answers, may be briefly stale after a leader change
    consistent,   ///< leader verifies its leadership first (?consistent)
    stale,        ///< any server answers (?stale)
};

/// What the options of every request share: where it goes, and where its failure is
/// described. `Options` is the options type built on it, which each `with_*` call returns.
template <class Options>
struct request_options : detail::options_base<Options> {
    std::string datacenter; ///< ?dc= (empty: the client's default)
    /// Consul Enterprise ?ns= (empty: client_config::namespace_name).
    std::string namespace_name;
    /// Consul Enterprise ?partition= (empty: client_config::partition).
    std::string partition;
    diagnostics* diag = nullptr; ///< filled on error when not null

    Options& with_datacenter(std::string v) { return this->set(datacenter, std::move(v)); }
    Options& with_namespace(std::string v) { return this->set(namespace_name, std::move(v)); }
    Options& with_partition(std::string v) { return this->set(partition, std::move(v)); }
    Options& with_diag(diagnostics* v) { return this->set(diag, v); }
};

/// Options of every read. A blocking read is one with index > 0.
struct query_options : request_options<query_options> {
    query_options() = default;

    std::uint64_t index = 0;                      ///< block until the result's index exceeds this
    std::chrono::milliseconds wait{0};            ///< blocking wait (0: Consul's default, 5 min)
    consistency mode = consistency::default_mode; ///< consistency mode

    query_options& with_index(std::uint64_t v) { return set(index, v); }
    query_options& with_wait(std::chrono::milliseconds v) { return set(wait, v); }
    query_options& with_mode(consistency v) { return set(mode, v); }

    /// A blocking read: return when the index passes `after`, or after `wait`.
    static query_options blocking(std::uint64_t after, std::chrono::milliseconds wait) {
        return query_options{}.with_index(after).with_wait(wait);
    }
};

/// Options of every write.
struct write_options : request_options<write_options> {
    write_options() = default;

    /// Bounds this request (a wait for a connection included), when shorter than the
    /// client's request_timeout; it then fails with errc::timeout. 0: request_timeout.
    std::chrono::milliseconds timeout{0};

    write_options& with_timeout(std::chrono::milliseconds v) { return set(timeout, v); }
};

/// What Consul says about the state a read saw (X-Consul-* headers).
struct query_meta {
    std::uint64_t index = 0; ///< X-Consul-Index (0 when absent, e.g. txn)
    /// X-Consul-KnownLeader: whether the answering server knew of a leader.
    bool known_leader = false;
    /// X-Consul-LastContact: how long since the answering server last heard from the leader
    /// (0 when the leader answered).
    std::chrono::milliseconds last_contact{0};
};

} // namespace conclave
