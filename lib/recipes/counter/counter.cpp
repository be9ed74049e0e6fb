// SPDX-License-Identifier: BSL-1.0
// class counter: reads, check-and-set writes retried on lost races, and waits for a change
// on the key's shared query.
#include "consul/endpoint.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "recipes/common/as_terminal.hpp"
#include "recipes/common/cas_write.hpp"
#include "recipes/common/keyed_state.hpp"
#include "recipes/common/kv_query.hpp"
#include "recipes/counter/counter_value.hpp"

#include <conclave/counter.hpp>

#include <boost/asio/this_coro.hpp>

#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace conclave {

namespace detail {

struct counter_state : keyed_state<counter_options, key_query> {
    counter_state(client& c, const std::string& k, const counter_options& o)
        : keyed_state(
              c, k, o,
              key_query::of(c, "counter", k, key_query::settings{o.wait, o.retry_wait, false})) {}
};

} // namespace detail

namespace {

using clock = std::chrono::steady_clock;
using detail::counter_state;
using value_result = std::pair<error_code, std::int64_t>;
using reading_result = std::pair<error_code, counter_reading>;

// What a write does with the value it read: complete with `result` without writing (no
// `write`), write `write` and then complete with `result`, or fail with `ec` (described in
// `why`).
struct decision {
    decision() = default;
    std::optional<std::int64_t> write;
    std::int64_t result = 0;
    error_code ec;
    std::string why;
};

// One write operation: a description for messages ("add 5 to key k"), and its rule.
struct write_op {
    write_op(std::string w, std::function<decision(std::int64_t)> d)
        : what(std::move(w))
        , decide(std::move(d)) {}
    std::string what;
    std::function<decision(std::int64_t)> decide;
};

// The write as a check-and-set of the key (detail::run_cas), judged as a counter: the
// value the last decision gave once it completed.
asio::awaitable<value_result> run_write(std::shared_ptr<counter_state> st, write_op op,
                                        diagnostics* diag) {
    auto result = std::make_shared<std::int64_t>(0);
    auto rule = [key = st->key, decide = std::move(op.decide),
                 result](const std::optional<kv_entry>& entry) {
        auto judged = detail::judge_counter(key, entry);
        if (!judged.value)
            return detail::cas_step::failure(make_error_code(errc::conflict),
                                             std::move(judged.problem));
        auto next = decide(*judged.value);
        if (next.ec)
            return detail::cas_step::failure(next.ec, std::move(next.why));
        *result = next.result;
        if (!next.write)
            return detail::cas_step::finish();
        return detail::cas_step::put(detail::format_counter(*next.write), 0);
    };
    const auto budget = st->opts.budget;
    auto ec = co_await detail::run_cas(st->consul, st->key, budget,
                                       detail::cas_op{std::move(op.what), std::move(rule)}, diag);
    co_return value_result{ec, ec ? 0 : *result};
}

asio::awaitable<error_code> run_set(std::shared_ptr<counter_state> st, write_op op,
                                    diagnostics* diag) {
    auto r = co_await run_write(std::move(st), std::move(op), diag);
    co_return r.first;
}

using detail::as_terminal;

asio::awaitable<reading_result> read_value(std::shared_ptr<counter_state> st, diagnostics* diag) {
    co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation(),
                                                       as_terminal{});
    diagnostics said;
    auto [ec, read] = co_await detail::call(
        st->consul, detail::endpoint::kv_get{st->key, query_options{}.with_diag(&said)});
    reading_result r{ec, counter_reading{}};
    if (!ec) {
        auto judged = detail::judge_counter(st->key, read.entry);
        if (judged.value) {
            r.second = counter_reading{*judged.value, read.entry ? read.entry->modify_index : 0};
        } else {
            r.first = make_error_code(errc::conflict);
            said.client_message = std::move(judged.problem);
        }
    }
    if (diag)
        *diag = r.first ? said : diagnostics{};
    co_return r;
}

asio::awaitable<reading_result> wait_change(std::shared_ptr<counter_state> st, std::uint64_t seen,
                                            diagnostics* diag) {
    co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation(),
                                                       as_terminal{});
    const auto aborted = reading_result{asio::error::operation_aborted, counter_reading{}};
    auto& hub = *st->hub;
    const auto subscription = hub.subscribe();
    const auto reads_at_start = hub.reads();
    for (;;) {
        if (hub.refusal()) {
            co_return reading_result{detail::read_denied(hub, diag), counter_reading{}};
        }
        // The hub's view must be at least as recent as the caller's reading: a read answered
        // before the caller's own write would look like a change back. Unless a read sent
        // after this wait began says less (Consul's history was replaced: a restore).
        const bool recent_enough = hub.state_index() >= seen || hub.reads() >= reads_at_start + 2;
        if (hub.known() && detail::key_index(hub) != seen && recent_enough) {
            auto judged = detail::judge_counter(st->key, hub.value());
            if (!judged.value) {
                if (diag) {
                    diag->clear();
                    diag->client_message = std::move(judged.problem);
                }
                co_return reading_result{make_error_code(errc::conflict), counter_reading{}};
            }
            if (diag)
                diag->clear();
            co_return reading_result{error_code{},
                                     counter_reading{*judged.value, detail::key_index(hub)}};
        }
        co_await hub.changed.wait(clock::time_point::max());
        const auto state = co_await asio::this_coro::cancellation_state;
        if (state.cancelled() != asio::cancellation_type::none)
            co_return aborted;
    }
}

std::string signed_text(std::int64_t v) {
    return v < 0 ? std::to_string(v) : "+" + std::to_string(v);
}

} // namespace

counter::counter(client& c, std::string key, counter_options opts) {
    if (key.empty())
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "a counter needs a key");
    state_ = std::make_shared<detail::counter_state>(c, std::move(key), std::move(opts));
}

const std::string& counter::key() const noexcept {
    return state_->key;
}

void counter::get_impl(state_ptr st, detail::diagnostics_route* route,
                       asio::any_completion_handler<void(error_code, counter_reading)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    detail::spawn_op(ex, read_value(std::move(st), diag), std::move(h));
}

void counter::add_impl(state_ptr st, std::int64_t delta, detail::diagnostics_route* route,
                       asio::any_completion_handler<void(error_code, std::int64_t)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    const auto what = "add " + signed_text(delta) + " to key " + st->key;
    auto rule = [delta, key = st->key](std::int64_t current) {
        decision d;
        d.result = current;
        if (delta == 0)
            return d; // nothing to write
        if (auto sum = detail::checked_add(current, delta)) {
            d.write = *sum;
            d.result = *sum;
        } else {
            d.ec = make_error_code(errc::invalid_argument);
            d.why = "add " + signed_text(delta) + " to key " + key + ": " +
                    std::to_string(current) +
                    " plus it overflows a 64-bit counter (counters never wrap); nothing written";
        }
        return d;
    };
    detail::spawn_op(ex, run_write(std::move(st), write_op{what, rule}, diag), std::move(h));
}

void counter::set_impl(state_ptr st, std::int64_t v, detail::diagnostics_route* route,
                       asio::any_completion_handler<void(error_code)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    const auto what = "set key " + st->key + " to " + std::to_string(v);
    auto rule = [v](std::int64_t) {
        decision d;
        d.write = v;
        d.result = v;
        return d;
    };
    detail::spawn_op(ex, run_set(std::move(st), write_op{what, rule}, diag), std::move(h));
}

void counter::compare_and_set_impl(state_ptr st, std::int64_t expected, std::int64_t desired,
                                   detail::diagnostics_route* route,
                                   asio::any_completion_handler<void(error_code, bool)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    const auto what = "compare-and-set key " + st->key + " from " + std::to_string(expected) +
                      " to " + std::to_string(desired);
    auto rule = [expected, desired](std::int64_t current) {
        decision d;
        d.result = current == expected ? 1 : 0;
        if (current == expected && desired != expected)
            d.write = desired;
        return d;
    };
    auto as_bool = [](value_result r) {
        return std::pair<error_code, bool>{r.first, r.second != 0};
    };
    detail::spawn_op(ex, run_write(std::move(st), write_op{what, rule}, diag), std::move(h),
                     as_bool);
}

void counter::wait_change_impl(state_ptr st, std::uint64_t seen, detail::diagnostics_route* route,
                               asio::any_completion_handler<void(error_code, counter_reading)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    detail::spawn_op(ex, wait_change(std::move(st), seen, diag), std::move(h));
}

} // namespace conclave
