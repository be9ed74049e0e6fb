// SPDX-License-Identifier: BSL-1.0
// semaphore::async_set_limit: a resizable semaphore's limit changed at run time, by
// check-and-set on `.lock` (the holders are left as they are: a smaller limit drains).
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "recipes/common/acquire_policy.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/semaphore/semaphore_state.hpp"

#include <conclave/semaphore.hpp>

namespace conclave {

namespace {

using detail::clock;

asio::awaitable<error_code> set_limit(std::shared_ptr<detail::semaphore_state> sem,
                                      std::uint32_t limit) {
    if (limit == 0 || !sem->opts.resizable)
        co_return make_error_code(errc::invalid_argument);
    const auto until = clock::now() + sem->consul.config().request_timeout;
    detail::cas_race_backoff race;
    while (clock::now() < until) {
        auto [ec, r] = co_await detail::call(
            sem->consul, detail::endpoint::kv_get{sem->lock_key, query_options{}}, until);
        if (ec)
            co_return ec;
        detail::semaphore_record record;
        std::uint64_t index = 0; // (a check-and-set at 0 creates `.lock` only if absent)
        if (r.entry) {
            if (r.entry->flags != semaphore_flag_value)
                co_return make_error_code(errc::conflict);
            auto read = detail::semaphore_record::decode(r.entry->value, limit);
            if (!read)
                co_return make_error_code(errc::bad_response);
            record = std::move(*read);
            index = r.entry->modify_index;
        }
        if (index != 0 && record.limit == static_cast<std::int64_t>(limit))
            co_return error_code{};
        record.limit = limit;
        std::vector<txn_op> ops{
            txn_op::cas(sem->lock_key, record.encode(), index, semaphore_flag_value)};
        auto [tec, t] =
            co_await detail::call(sem->consul, detail::endpoint::txn{std::move(ops), {}}, until);
        if (tec)
            co_return tec;
        if (t.committed)
            co_return error_code{}; // (the prefix's shared query tells the waiters)
        if (detail::classify_refusal(t.errors) == detail::refusal::denied)
            co_return make_error_code(errc::permission_denied);
        co_await detail::sleep_for(race.next(), until); // lost a race: read again
    }
    co_return make_error_code(errc::timeout);
}

} // namespace

void semaphore::set_limit_impl(state_ptr sem, std::uint32_t limit,
                               asio::any_completion_handler<void(error_code)> h) {
    auto ex = sem->consul.get_executor();
    detail::spawn_op(ex, set_limit(std::move(sem), limit), std::move(h));
}

} // namespace conclave
