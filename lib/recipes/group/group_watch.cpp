// SPDX-License-Identifier: BSL-1.0
// group_watch: each async_next waits on the prefix's shared query until the members differ
// from the last report.
#include "consul/spawn.hpp"
#include "recipes/common/as_terminal.hpp"
#include "recipes/group/group_members.hpp"
#include "recipes/group/group_state.hpp"

#include <boost/asio/this_coro.hpp>

namespace conclave {

namespace {

using clock = std::chrono::steady_clock;
using detail::group_watch_state;
using view_result = std::pair<error_code, group_view>;

asio::awaitable<view_result> next_view(std::shared_ptr<group_watch_state> W, diagnostics* diag) {
    co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation(),
                                                       detail::as_terminal{});
    if (W->busy)
        co_return view_result{make_error_code(errc::invalid_argument), group_view{}};
    W->busy = true;
    struct not_busy {
        group_watch_state& w;
        ~not_busy() { w.busy = false; }
    } guard{*W};
    auto& hub = *W->group->hub;
    const auto subscription = hub.subscribe();
    for (;;) {
        if (hub.refusal())
            co_return view_result{detail::read_denied(hub, diag), group_view{}};
        if (hub.known() && (!W->last || *W->last != hub.members())) {
            group_view v;
            v.members = hub.members();
            v.changes =
                detail::diff_members(W->last.value_or(std::vector<member_info>{}), v.members);
            v.index = hub.state_index();
            W->last = v.members;
            if (diag)
                diag->clear();
            co_return view_result{error_code{}, std::move(v)};
        }
        co_await hub.changed.wait(clock::time_point::max());
        const auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none)
            co_return view_result{asio::error::operation_aborted, group_view{}};
    }
}

} // namespace

group_watch::group_watch(state_ptr s)
    : state_(std::move(s)) {}
group_watch::group_watch(group_watch&&) noexcept = default;
group_watch& group_watch::operator=(group_watch&&) noexcept = default;
group_watch::~group_watch() = default;

void group_watch::next_impl(state_ptr W, detail::diagnostics_route* route,
                            asio::any_completion_handler<void(error_code, group_view)> h) {
    auto* diag = detail::diagnostics_route::target(route, W->group->opts.diag);
    auto ex = W->group->consul.get_executor();
    detail::spawn_op(ex, next_view(std::move(W), diag), std::move(h));
}

} // namespace conclave
