// SPDX-License-Identifier: BSL-1.0
// A barrier's or a latch's read and wait of its key.
#include "consul/endpoint.hpp"
#include "consul/endpoints/kv.hpp"
#include "recipes/barrier/key_wait.hpp"
#include "recipes/common/as_terminal.hpp"
#include "recipes/common/deadline.hpp"

#include <boost/asio/this_coro.hpp>

namespace conclave::detail {

namespace {

using read_result = std::pair<error_code, std::optional<kv_entry>>;

// The read itself, and the index it is as of (0 on failure).
asio::awaitable<std::pair<read_result, std::uint64_t>>
read_once(watched_key_state& st, const key_rule& rule, diagnostics& said) {
    auto [ec, r] =
        co_await call(st.consul, endpoint::kv_get{st.key, query_options{}.with_diag(&said)});
    if (ec)
        co_return std::pair<read_result, std::uint64_t>{read_result{ec, std::nullopt}, 0};
    if (auto verdict = rule(r.entry); !verdict.problem.empty()) {
        said.clear();
        said.client_message = std::move(verdict.problem);
        co_return std::pair<read_result, std::uint64_t>{
            read_result{make_error_code(errc::conflict), std::nullopt}, 0};
    }
    co_return std::pair<read_result, std::uint64_t>{read_result{error_code{}, std::move(r.entry)},
                                                    r.meta.index};
}

} // namespace

asio::awaitable<read_result> read_judged(std::shared_ptr<watched_key_state> st, key_rule rule,
                                         diagnostics* diag) {
    co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation(),
                                                       as_terminal{});
    diagnostics said;
    auto [r, index] = co_await read_once(*st, rule, said);
    (void)index;
    if (diag)
        *diag = r.first ? said : diagnostics{};
    co_return r;
}

asio::awaitable<error_code> wait_for_key(std::shared_ptr<watched_key_state> st, key_rule rule,
                                         diagnostics* diag) {
    co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation(),
                                                       as_terminal{});
    diagnostics said;
    auto finish = [&](error_code ec) {
        if (diag)
            *diag = ec ? said : diagnostics{};
        return ec;
    };
    auto& hub = *st->hub;
    const auto subscription = hub.subscribe(); // the query starts while the read runs
    auto [first, min_index] = co_await read_once(*st, rule, said);
    if (first.first)
        co_return finish(first.first);
    if (rule(first.second).done)
        co_return finish(error_code{});
    const auto reads_at_start = hub.reads();
    std::optional<std::uint64_t> seen_reads; // none: the query's state now is news too
    for (;;) {
        if (hub.refusal())
            co_return finish(read_denied(hub, &said));
        // Unless a read sent after ours says less (Consul's history was replaced: a restore).
        const bool recent = hub.state_index() >= min_index || hub.reads() >= reads_at_start + 2;
        if (hub.known() && hub.reads() != seen_reads && recent) {
            seen_reads = hub.reads();
            auto verdict = rule(hub.value());
            if (!verdict.problem.empty()) {
                said.clear();
                said.client_message = std::move(verdict.problem);
                co_return finish(make_error_code(errc::conflict));
            }
            if (verdict.done)
                co_return finish(error_code{});
        }
        co_await hub.changed.wait(clock::time_point::max());
        const auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none) {
            said.clear();
            co_return finish(asio::error::operation_aborted);
        }
    }
}

} // namespace conclave::detail
