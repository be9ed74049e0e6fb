// SPDX-License-Identifier: BSL-1.0
// semaphore::async_status: who holds the slots, read once from the prefix and judged by the
// acquire's own rules (detail::interpret), so that the holders it reports are those an
// acquire would count.
#include "consul/endpoint.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "recipes/semaphore/semaphore_state.hpp"

#include <conclave/semaphore.hpp>

#include <optional>
#include <string>
#include <utility>

namespace conclave {

namespace {

using status_result = std::pair<error_code, semaphore_status>;

asio::awaitable<status_result> read_status(std::shared_ptr<detail::semaphore_state> sem,
                                           diagnostics* diag) {
    // Consul's text goes to `diag` only when the read fails: a success leaves it empty, as
    // an acquire's does.
    diagnostics said;
    auto [ec, list] = co_await detail::call(
        sem->consul, detail::endpoint::kv_list{detail::join_key(sem->prefix, ""),
                                               query_options{}.with_diag(&said)});
    if (diag)
        *diag = said;
    if (ec)
        co_return status_result{ec, semaphore_status{}};
    const kv_entry* lock = nullptr;
    for (const auto& e : list.entries)
        if (e.key == sem->lock_key)
            lock = &e;
    auto r = detail::interpret(*sem, lock, list.entries, diag);
    if (r.ec)
        co_return status_result{r.ec, semaphore_status{}};
    // (The record's limit: the object's unless it is resizable.)
    auto status = detail::status_of(r.record.limit_slots(), sem->prefix, r, list.entries);
    co_return status_result{error_code{}, std::move(status)};
}

} // namespace

void semaphore::status_impl(state_ptr sem, detail::diagnostics_route* route,
                            asio::any_completion_handler<void(error_code, semaphore_status)> h) {
    auto* diag = detail::diagnostics_route::target(route, sem->opts.diag);
    auto ex = sem->consul.get_executor();
    detail::spawn_op(ex, read_status(std::move(sem), diag), std::move(h));
}

} // namespace conclave
