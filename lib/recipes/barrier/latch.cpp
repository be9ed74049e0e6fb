// SPDX-License-Identifier: BSL-1.0
// class countdown_latch: try_set_count and count_down as check-and-set writes retried on
// lost races (detail::run_cas), get_count, and the wait for 0 on the key's shared query.
#include "consul/spawn.hpp"
#include "recipes/barrier/key_wait.hpp"
#include "recipes/barrier/latch_rules.hpp"
#include "recipes/common/cas_write.hpp"

#include <conclave/latch.hpp>

#include <memory>
#include <string>
#include <utility>

namespace conclave {

namespace detail {

struct latch_state : watched_key_state {
    latch_state(client& c, const std::string& k, const latch_options& o)
        : watched_key_state(c, "latch", k, o) {}
};

} // namespace detail

namespace {

using detail::latch_state;
using count_result = std::pair<error_code, std::uint64_t>;

// A write: `step` decides it on the count read; the count it leaves is what completes it.
asio::awaitable<count_result>
run_write(std::shared_ptr<latch_state> st, std::string what,
          std::function<detail::cas_step(std::uint64_t, std::uint64_t&)> step, diagnostics* diag) {
    auto result = std::make_shared<std::uint64_t>(0);
    auto rule = [key = st->key, step = std::move(step),
                 result](const std::optional<kv_entry>& entry) {
        auto judged = detail::judge_latch(key, entry);
        if (!judged.count)
            return detail::cas_step::failure(make_error_code(errc::conflict),
                                             std::move(judged.problem));
        return step(*judged.count, *result);
    };
    const auto budget = st->opts.budget;
    auto ec = co_await detail::run_cas(st->consul, st->key, budget,
                                       detail::cas_op{std::move(what), std::move(rule)}, diag);
    co_return count_result{ec, ec ? 0 : *result};
}

detail::key_rule latch_rule(const std::string& key) {
    return [key](const std::optional<kv_entry>& entry) {
        auto judged = detail::judge_latch(key, entry);
        return detail::key_verdict{judged.count == 0u, std::move(judged.problem)};
    };
}

} // namespace

countdown_latch::countdown_latch(client& c, std::string key, latch_options opts) {
    if (key.empty())
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "a countdown latch needs a key");
    state_ = std::make_shared<detail::latch_state>(c, key, opts);
}

const std::string& countdown_latch::key() const noexcept {
    return state_->key;
}

void countdown_latch::set_count_impl(state_ptr st, std::uint64_t n,
                                     detail::diagnostics_route* route,
                                     asio::any_completion_handler<void(error_code, bool)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    const auto what = "set the count of latch " + st->key + " to " + std::to_string(n);
    auto as_bool = [](count_result r) {
        return std::pair<error_code, bool>{r.first, r.second != 0};
    };
    if (n == 0) {
        if (diag) {
            diag->clear();
            diag->client_message = what + ": a count must be above 0; nothing written";
        }
        auto refuse = []() -> asio::awaitable<count_result> {
            co_return count_result{make_error_code(errc::invalid_argument), 0};
        };
        detail::spawn_op(ex, refuse(), std::move(h), as_bool);
        return;
    }
    // Completes with 1 when this write set the count, 0 when one was set already.
    auto step = [n](std::uint64_t current, std::uint64_t& result) {
        result = current == 0 ? 1 : 0;
        return detail::set_count_step(current, n);
    };
    detail::spawn_op(ex, run_write(std::move(st), what, step, diag), std::move(h), as_bool);
}

void countdown_latch::count_down_impl(
    state_ptr st, detail::diagnostics_route* route,
    asio::any_completion_handler<void(error_code, std::uint64_t)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    auto what = "count down latch " + st->key;
    auto step = [](std::uint64_t current, std::uint64_t& result) {
        result = current == 0 ? 0 : current - 1;
        return detail::count_down_step(current);
    };
    detail::spawn_op(ex, run_write(std::move(st), std::move(what), step, diag), std::move(h));
}

void countdown_latch::get_count_impl(
    state_ptr st, detail::diagnostics_route* route,
    asio::any_completion_handler<void(error_code, std::uint64_t)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    auto key = st->key;
    auto as_count = [key](std::pair<error_code, std::optional<kv_entry>> r) {
        std::uint64_t count = 0;
        if (!r.first)
            count = detail::judge_latch(key, r.second).count.value_or(0);
        return count_result{r.first, count};
    };
    auto rule = latch_rule(st->key);
    detail::spawn_op(ex, detail::read_judged(std::move(st), std::move(rule), diag), std::move(h),
                     as_count);
}

void countdown_latch::wait_impl(state_ptr st, detail::diagnostics_route* route,
                                asio::any_completion_handler<void(error_code)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    auto rule = latch_rule(st->key);
    detail::spawn_op(ex, detail::wait_for_key(std::move(st), std::move(rule), diag), std::move(h));
}

} // namespace conclave
