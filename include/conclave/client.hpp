// SPDX-License-Identifier: BSL-1.0
// class client: typed, non-blocking access to Consul's HTTP API.
#pragma once

#include <conclave/config.hpp>
#include <conclave/detail/asio_fwd.hpp>
#include <conclave/detail/export.hpp>
#include <conclave/detail/initiate.hpp>
#include <conclave/types.hpp>

#include <memory>
#include <string>
#include <vector>

namespace conclave {

namespace detail {
class client_impl;
struct client_access;
} // namespace detail

/// Counters of what the client did (for benchmarks and tests).
struct client_stats {
    std::uint64_t requests = 0; ///< HTTP requests written
    std::uint64_t connects = 0; ///< connections opened
    std::uint64_t retries = 0;  ///< GETs retried after a stale keep-alive connection
    /// Connections open or being opened, and the slots of blocking queries abandoned by
    /// their callers that Consul still counts (until their waits would have ended).
    std::size_t open_connections = 0;
    std::size_t idle_connections = 0;
    /// Connections the client may hold at once: max_connections, or fewer once Consul
    /// refused one (its limits.http_max_conns_per_client, shared by every client on this
    /// address, is reached: the client then keeps to the connections it has).
    std::size_t connection_limit = 0;
    /// Blocking queries that may run at once: the rest of connection_limit is kept for
    /// short requests (session renewals, acquires, releases), which never wait for a
    /// blocking query to end.
    std::size_t blocking_query_limit = 0;
    std::uint64_t refused_connects = 0; ///< connections Consul refused for its limit
    /// Blocking reads of single keys waiting on a query they share with the other reads
    /// under the same folder (what they do once blocking_query_limit is nearly reached),
    /// and those shared queries.
    std::size_t shared_key_reads = 0;
    std::size_t shared_folder_queries = 0;
};

/// A Consul HTTP client with a bounded keep-alive connection pool.
///
/// Every operation is `async_*`, takes a completion token and completes with
/// `void(error_code, T)`. The default token, `with_diagnostics(asio::use_awaitable)`,
/// makes `co_await c.async_kv_get("k")` return the T or throw conclave::error, whose text
/// carries Consul's. HTTP errors map to conclave::errc (see error.hpp); with a token that keeps the
/// error code, pass `diag` in the options to get Consul's text. A KV key that does not exist
/// is not an error: the result is empty.
///
/// Cancellation: every operation supports terminal cancellation through the completion
/// handler's cancellation slot (what `||`, parallel groups and `cancellation_signal::emit
/// (terminal)` deliver); it then completes with `asio::error::operation_aborted` and the
/// connection it used is discarded. Partial or total cancellation alone is not honoured: a
/// write may already have reached Consul, so its effect cannot be promised away.
///
/// Thread safety: a client lives on one executor; use a strand if several threads run it.
/// Copies are cheap handles to the same pool. Operations in flight keep the pool alive.
class CONCLAVE_DECL client {
public:
    using executor_type = asio::any_io_executor;

    /// Throws system_error(errc::invalid_config) for unusable TLS files or a token or host
    /// with a line break or NUL (they go into request headers as they are).
    explicit client(executor_type ex, client_config cfg = {});

    executor_type get_executor() const noexcept;
    const client_config& config() const noexcept;
    client_stats stats() const noexcept;

    /// Closes idle connections and fails waiting requests with errc::pool_closed.
    /// Requests on the wire are not interrupted (cancel them through their slot).
    void close();

    // ---- KV ---------------------------------------------------------------------------

    /// `GET /v1/kv/<key>`. An absent key gives an empty `entry`.
    template <class Token = default_token_t>
    auto async_kv_get(std::string key, query_options opts = {}, Token&& token = {}) {
        return initiate<kv_get_result>(&client::kv_get_impl, token, std::move(key),
                                       std::move(opts));
    }

    /// `GET /v1/kv/<key>?raw`: the stored bytes.
    template <class Token = default_token_t>
    auto async_kv_get_raw(std::string key, query_options opts = {}, Token&& token = {}) {
        return initiate<kv_raw_result>(&client::kv_get_raw_impl, token, std::move(key),
                                       std::move(opts));
    }

    /// `GET /v1/kv/<prefix>?recurse`: every entry whose key starts with prefix.
    template <class Token = default_token_t>
    auto async_kv_list(std::string prefix, query_options opts = {}, Token&& token = {}) {
        return initiate<kv_list_result>(&client::kv_list_impl, token, std::move(prefix),
                                        std::move(opts));
    }

    /// `GET /v1/kv/<prefix>?keys[&separator=]`: key names only.
    template <class Token = default_token_t>
    auto async_kv_keys(std::string prefix, kv_keys_options opts = {}, Token&& token = {}) {
        return initiate<kv_keys_result>(&client::kv_keys_impl, token, std::move(prefix),
                                        std::move(opts));
    }

    /// `PUT /v1/kv/<key>`: set, cas, acquire or release. Completes with Consul's true/false.
    template <class Token = default_token_t>
    auto async_kv_put(std::string key, std::string value, kv_put_options opts = {},
                      Token&& token = {}) {
        return initiate<bool>(&client::kv_put_impl, token, std::move(key), std::move(value),
                              std::move(opts));
    }

    /// `DELETE /v1/kv/<key>[?recurse][&cas=]`. Completes with Consul's true/false.
    template <class Token = default_token_t>
    auto async_kv_delete(std::string key, kv_delete_options opts = {}, Token&& token = {}) {
        return initiate<bool>(&client::kv_delete_impl, token, std::move(key), std::move(opts));
    }

    // ---- sessions ---------------------------------------------------------------------

    /// PUT /v1/session/create. Completes with the new session's ID.
    template <class Token = default_token_t>
    auto async_session_create(session_options opts = {}, Token&& token = {}) {
        return initiate<std::string>(&client::session_create_impl, token, std::move(opts));
    }

    /// `PUT /v1/session/renew/<id>`. An unknown session completes with
    /// errc::session_invalidated. The entry carries the TTL Consul wants (may be larger).
    template <class Token = default_token_t>
    auto async_session_renew(std::string id, write_options opts = {}, Token&& token = {}) {
        return initiate<session_entry>(&client::session_renew_impl, token, std::move(id),
                                       std::move(opts));
    }

    /// `PUT /v1/session/destroy/<id>`. Idempotent: an unknown ID also succeeds.
    template <class Token = default_token_t>
    auto async_session_destroy(std::string id, write_options opts = {}, Token&& token = {}) {
        return initiate<bool>(&client::session_destroy_impl, token, std::move(id), std::move(opts));
    }

    /// `GET /v1/session/info/<id>`. An unknown session gives an empty `session`.
    template <class Token = default_token_t>
    auto async_session_info(std::string id, query_options opts = {}, Token&& token = {}) {
        return initiate<session_info_result>(&client::session_info_impl, token, std::move(id),
                                             std::move(opts));
    }

    /// GET /v1/session/list.
    template <class Token = default_token_t>
    auto async_session_list(query_options opts = {}, Token&& token = {}) {
        return initiate<session_list_result>(&client::session_list_impl, token, std::move(opts));
    }

    /// `GET /v1/session/node/<node>`.
    template <class Token = default_token_t>
    auto async_session_node(std::string node, query_options opts = {}, Token&& token = {}) {
        return initiate<session_list_result>(&client::session_node_impl, token, std::move(node),
                                             std::move(opts));
    }

    // ---- transactions, status ---------------------------------------------------------

    /// PUT /v1/txn. A rollback (409) completes successfully with `committed == false`.
    template <class Token = default_token_t>
    auto async_txn(std::vector<txn_op> ops, txn_options opts = {}, Token&& token = {}) {
        return initiate<txn_result>(&client::txn_impl, token, std::move(ops), std::move(opts));
    }

    /// GET /v1/status/leader: the Raft leader's address, empty when there is none.
    template <class Token = default_token_t>
    auto async_status_leader(write_options opts = {}, Token&& token = {}) {
        return initiate<std::string>(&client::status_leader_impl, token, std::move(opts));
    }

    /// GET /v1/agent/self: node name, datacenter, version.
    template <class Token = default_token_t>
    auto async_agent_self(write_options opts = {}, Token&& token = {}) {
        return initiate<agent_info>(&client::agent_self_impl, token, std::move(opts));
    }

    // ---- agent TTL checks -------------------------------------------------------------

    /// `PUT /v1/agent/check/register`: a TTL check on the agent the client talks to. The
    /// agent tells the servers soon after (a session created at once may not find it yet:
    /// Consul then answers errc::check_critical, "Missing check ... registration").
    template <class Token = default_token_t>
    auto async_agent_check_register(agent_check_options opts, Token&& token = {}) {
        return initiate<bool>(&client::agent_check_register_impl, token, std::move(opts));
    }

    /// `PUT /v1/agent/check/deregister/<id>`: sessions bound to the check are invalidated.
    /// Idempotent: a check the agent does not have also succeeds.
    template <class Token = default_token_t>
    auto async_agent_check_deregister(std::string id, write_options opts = {}, Token&& token = {}) {
        return initiate<bool>(&client::agent_check_deregister_impl, token, std::move(id),
                              std::move(opts));
    }

    /// `PUT /v1/agent/check/{pass,warn,fail}/<id>[?note=]`: sets a TTL check's status and
    /// output (the note), and restarts its TTL. Critical invalidates the sessions bound to the
    /// check. A check that is not a TTL check of this agent fails (errc::server_error).
    template <class Token = default_token_t>
    auto async_agent_check_update(std::string id, check_status status, std::string note = {},
                                  write_options opts = {}, Token&& token = {}) {
        return initiate<bool>(&client::agent_check_update_impl, token, std::move(id), status,
                              std::move(note), std::move(opts));
    }

private:
    friend struct detail::client_access;

    template <class T>
    using handler = asio::any_completion_handler<void(error_code, T)>;

    // Starts an operation: `impl` gets the arguments and a type-erased handler. For
    // with_diagnostics, the options' diagnostics are routed to the exception.
    template <class T, class Impl, class Token, class... Args>
    auto initiate(Impl impl, Token& token, Args&&... args) {
        auto start = [this, impl](detail::diagnostics_route* route, handler<T> h, auto&&... a) {
            (route_diagnostics(a, route), ...);
            (this->*impl)(std::forward<decltype(a)>(a)..., std::move(h));
        };
        return detail::initiate_with<void(error_code, T)>(token, std::move(start),
                                                          std::forward<Args>(args)...);
    }
    template <class Options>
    static void route_diagnostics(Options& o, detail::diagnostics_route* route) {
        if constexpr (requires { o.diag; })
            o.diag = detail::diagnostics_route::target(route, o.diag);
        else if constexpr (requires { o.query.diag; })
            o.query.diag = detail::diagnostics_route::target(route, o.query.diag);
    }

    void kv_get_impl(std::string, query_options, handler<kv_get_result>);
    void kv_get_raw_impl(std::string, query_options, handler<kv_raw_result>);
    void kv_list_impl(std::string, query_options, handler<kv_list_result>);
    void kv_keys_impl(std::string, kv_keys_options, handler<kv_keys_result>);
    void kv_put_impl(std::string, std::string, kv_put_options, handler<bool>);
    void kv_delete_impl(std::string, kv_delete_options, handler<bool>);
    void session_create_impl(session_options, handler<std::string>);
    void session_renew_impl(std::string, write_options, handler<session_entry>);
    void session_destroy_impl(std::string, write_options, handler<bool>);
    void session_info_impl(std::string, query_options, handler<session_info_result>);
    void session_list_impl(query_options, handler<session_list_result>);
    void session_node_impl(std::string, query_options, handler<session_list_result>);
    void txn_impl(std::vector<txn_op>, txn_options, handler<txn_result>);
    void status_leader_impl(write_options, handler<std::string>);
    void agent_self_impl(write_options, handler<agent_info>);
    void agent_check_register_impl(agent_check_options, handler<bool>);
    void agent_check_deregister_impl(std::string, write_options, handler<bool>);
    void agent_check_update_impl(std::string, check_status, std::string, write_options,
                                 handler<bool>);

    std::shared_ptr<detail::client_impl> impl_;
};

} // namespace conclave
