// SPDX-License-Identifier: BSL-1.0
// A double barrier's readings of its prefix: read now, or wait for the shared query's news.
#include "consul/endpoint.hpp"
#include "consul/endpoints/kv.hpp"
#include "recipes/barrier/double_barrier_state.hpp"
#include "recipes/common/deadline.hpp"

#include <boost/asio/this_coro.hpp>

namespace conclave::detail {

asio::awaitable<std::pair<error_code, prefix_view>> read_prefix(double_barrier_state& st,
                                                                diagnostics& said) {
    auto [ec, r] =
        co_await call(st.consul, endpoint::kv_list{st.key + "/", query_options{}.with_diag(&said)});
    prefix_view v;
    if (!ec) {
        v.reading = read_barrier(st.key, r.entries);
        v.index = r.meta.index;
    }
    co_return std::pair<error_code, prefix_view>{ec, std::move(v)};
}

barrier_news::barrier_news(double_barrier_state& st)
    : st_(st)
    , subscription_(st.hub->subscribe()) {}

void barrier_news::after(std::uint64_t index) {
    min_index_ = index;
    seen_reads_.reset();
    reads_at_after_ = st_.hub->reads();
}

asio::awaitable<std::pair<error_code, prefix_view>> barrier_news::next(diagnostics& said) {
    auto& hub = *st_.hub;
    for (;;) {
        if (hub.refusal())
            co_return std::pair<error_code, prefix_view>{read_denied(hub, &said), prefix_view{}};
        // Unless a read sent after ours says less (Consul's history was replaced: a restore).
        const bool recent = hub.state_index() >= min_index_ || hub.reads() >= reads_at_after_ + 2;
        if (hub.known() && hub.reads() != seen_reads_ && recent) {
            seen_reads_ = hub.reads();
            prefix_view v{read_barrier(st_.key, hub.value()), hub.state_index()};
            co_return std::pair<error_code, prefix_view>{error_code{}, std::move(v)};
        }
        co_await hub.changed.wait(clock::time_point::max());
        const auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none)
            co_return std::pair<error_code, prefix_view>{asio::error::operation_aborted,
                                                         prefix_view{}};
    }
}

void delete_dead(double_barrier_state& st, const barrier_reading& r) {
    for (const auto& [key, index] : r.dead)
        delete_in_background(st.consul, key, index);
}

} // namespace conclave::detail
