// SPDX-License-Identifier: BSL-1.0
// The client's public operations: each one calls its endpoint (consul/endpoints/) through
// consul/endpoint.hpp, in a coroutine of its own (spawn_op) so that any completion token
// works.
#include "consul/blocking/shared_key_read.hpp"
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/agent_check.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/endpoints/session.hpp"
#include "consul/read_key.hpp"

namespace conclave {

namespace detail {

namespace {

// A blocking read: from its folder's shared query when the blocking queries hold all the
// connections they may (shared_key_read.hpp), else alone. Decided when the coroutine runs,
// not when the read is started: reads started together then see the lane fill up as each
// one before them enters it.
asio::awaitable<std::pair<error_code, kv_get_result>>
read_key_blocking(std::shared_ptr<client_impl> c, endpoint::kv_get read) {
    try {
        const query_options& q = read.query;
        // The folders' shared queries read the client's namespace and partition.
        const bool default_scope = q.namespace_name.empty() && q.partition.empty();
        if (default_scope && c->blocking_lane->crowded()) {
            std::string_view k = read.key;
            if (!k.empty() && k.front() == '/')
                k.remove_prefix(1);
            const auto folder = sharing_folder(k);
            if (folder && kv_path(k, false) && folder_shareable(*c, std::string(*folder))) {
                auto shared = co_await shared_key_read(c, std::string(k), std::string(*folder), q);
                using how = shared_read::outcome;
                if (shared.how == how::answered)
                    co_return std::pair{shared.ec, std::move(shared.result)};
                if (shared.how == how::wait_over)
                    read.query.index = 0; // the key as it is now, as Consul answers then
            }
        }
        co_return co_await call(std::move(c), std::move(read));
    } catch (...) { // as call() does
        co_return std::pair{error_from_exception(std::current_exception()), kv_get_result{}};
    }
}

} // namespace

asio::awaitable<std::pair<error_code, kv_get_result>> read_key(std::shared_ptr<client_impl> c,
                                                               endpoint::kv_get read) {
    // A read without an index never shares: it is call() itself, with no frame more.
    if (read.query.index == 0)
        return call(std::move(c), std::move(read));
    return read_key_blocking(std::move(c), std::move(read));
}

asio::awaitable<std::pair<error_code, kv_get_result>> read_key(const client& c,
                                                               endpoint::kv_get read) {
    return read_key(client_access::impl(c).shared_from_this(), std::move(read));
}

} // namespace detail

namespace endpoint = detail::endpoint;

namespace {

// Calls the endpoint `e` in a coroutine of its own, completing `h` with its result.
template <class Endpoint>
void spawn_call(const std::shared_ptr<detail::client_impl>& c, Endpoint e,
                asio::any_completion_handler<void(error_code, typename Endpoint::result)> h) {
    detail::spawn_op(c->executor, detail::call(c, std::move(e)), std::move(h));
}

} // namespace

void client::kv_get_impl(std::string key, query_options q, handler<kv_get_result> h) {
    detail::spawn_op(impl_->executor,
                     detail::read_key(impl_, endpoint::kv_get{std::move(key), std::move(q)}),
                     std::move(h));
}

void client::kv_get_raw_impl(std::string key, query_options q, handler<kv_raw_result> h) {
    spawn_call(impl_, endpoint::kv_get_raw{std::move(key), std::move(q)}, std::move(h));
}

void client::kv_list_impl(std::string prefix, query_options q, handler<kv_list_result> h) {
    spawn_call(impl_, endpoint::kv_list{std::move(prefix), std::move(q)}, std::move(h));
}

void client::kv_keys_impl(std::string prefix, kv_keys_options o, handler<kv_keys_result> h) {
    spawn_call(impl_, endpoint::kv_keys{std::move(prefix), std::move(o)}, std::move(h));
}

void client::kv_put_impl(std::string key, std::string value, kv_put_options o, handler<bool> h) {
    spawn_call(impl_, endpoint::kv_put{std::move(key), std::move(value), std::move(o)},
               std::move(h));
}

void client::kv_delete_impl(std::string key, kv_delete_options o, handler<bool> h) {
    spawn_call(impl_, endpoint::kv_delete{std::move(key), std::move(o)}, std::move(h));
}

void client::session_create_impl(session_options o, handler<std::string> h) {
    spawn_call(impl_, endpoint::session_create{std::move(o)}, std::move(h));
}

void client::session_renew_impl(std::string id, write_options o, handler<session_entry> h) {
    spawn_call(impl_, endpoint::session_renew{std::move(id), std::move(o)}, std::move(h));
}

void client::session_destroy_impl(std::string id, write_options o, handler<bool> h) {
    spawn_call(impl_, endpoint::session_destroy{std::move(id), std::move(o)}, std::move(h));
}

void client::session_info_impl(std::string id, query_options q, handler<session_info_result> h) {
    spawn_call(impl_, endpoint::session_info{std::move(id), std::move(q)}, std::move(h));
}

void client::session_list_impl(query_options q, handler<session_list_result> h) {
    spawn_call(impl_, endpoint::session_list{std::nullopt, std::move(q)}, std::move(h));
}

void client::session_node_impl(std::string node, query_options q, handler<session_list_result> h) {
    spawn_call(impl_, endpoint::session_list{std::move(node), std::move(q)}, std::move(h));
}

void client::txn_impl(std::vector<txn_op> ops, txn_options o, handler<txn_result> h) {
    spawn_call(impl_, endpoint::txn{std::move(ops), std::move(o)}, std::move(h));
}

void client::status_leader_impl(write_options o, handler<std::string> h) {
    spawn_call(impl_, endpoint::status_leader{std::move(o)}, std::move(h));
}

void client::agent_self_impl(write_options o, handler<agent_info> h) {
    spawn_call(impl_, endpoint::agent_self{std::move(o)}, std::move(h));
}

void client::agent_check_register_impl(agent_check_options o, handler<bool> h) {
    spawn_call(impl_, endpoint::agent_check_register{std::move(o)}, std::move(h));
}

void client::agent_check_deregister_impl(std::string id, write_options o, handler<bool> h) {
    spawn_call(impl_, endpoint::agent_check_deregister{std::move(id), std::move(o)}, std::move(h));
}

void client::agent_check_update_impl(std::string id, check_status status, std::string note,
                                     write_options o, handler<bool> h) {
    spawn_call(impl_,
               endpoint::agent_check_update{std::move(id), status, std::move(note), std::move(o)},
               std::move(h));
}

} // namespace conclave
