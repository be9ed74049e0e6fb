// SPDX-License-Identifier: BSL-1.0
// class barrier: set and remove as check-and-set writes of its key (detail::run_cas), and
// the wait for its removal on the key's shared query.
#include "consul/spawn.hpp"
#include "recipes/barrier/key_wait.hpp"
#include "recipes/common/cas_write.hpp"
#include "recipes/common/recipe_flags.hpp"

#include <conclave/barrier.hpp>

#include <memory>
#include <string>
#include <utility>

namespace conclave {

namespace detail {

struct barrier_state : watched_key_state {
    barrier_state(client& c, const std::string& k, const barrier_options& o)
        : watched_key_state(c, "barrier", k, o) {}
};

} // namespace detail

namespace {

// Why the key is not a barrier's (empty: it may be one, or it is missing).
std::string problem_of(const std::string& key, const std::optional<kv_entry>& entry) {
    if (!entry)
        return {};
    auto why = detail::foreign_key(*entry, barrier_flag_value, "a barrier");
    return why.empty() ? why : "key " + key + " is not a barrier: " + why;
}

} // namespace

barrier::barrier(client& c, std::string key, barrier_options opts) {
    if (key.empty())
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "a barrier needs a key");
    state_ = std::make_shared<detail::barrier_state>(c, key, opts);
}

const std::string& barrier::key() const noexcept {
    return state_->key;
}

void barrier::set_impl(state_ptr st, bool set, detail::diagnostics_route* route,
                       asio::any_completion_handler<void(error_code)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    auto what = (set ? "set barrier " : "remove barrier ") + st->key;
    auto rule = [key = st->key, set](const std::optional<kv_entry>& entry) {
        if (auto why = problem_of(key, entry); !why.empty())
            return detail::cas_step::failure(make_error_code(errc::conflict), std::move(why));
        if (set == entry.has_value())
            return detail::cas_step::finish(); // as asked already
        return set ? detail::cas_step::put("", barrier_flag_value) : detail::cas_step::remove();
    };
    const auto budget = st->opts.budget;
    auto op = detail::cas_op{std::move(what), std::move(rule)};
    detail::spawn_op(ex, detail::run_cas(st->consul, st->key, budget, std::move(op), diag),
                     std::move(h));
}

void barrier::is_set_impl(state_ptr st, detail::diagnostics_route* route,
                          asio::any_completion_handler<void(error_code, bool)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    auto rule = [key = st->key](const std::optional<kv_entry>& entry) {
        return detail::key_verdict{!entry, problem_of(key, entry)};
    };
    auto as_set = [](std::pair<error_code, std::optional<kv_entry>> r) {
        return std::pair<error_code, bool>{r.first, !r.first && r.second.has_value()};
    };
    detail::spawn_op(ex, detail::read_judged(std::move(st), std::move(rule), diag), std::move(h),
                     as_set);
}

void barrier::wait_impl(state_ptr st, detail::diagnostics_route* route,
                        asio::any_completion_handler<void(error_code)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    auto rule = [key = st->key](const std::optional<kv_entry>& entry) {
        return detail::key_verdict{!entry, problem_of(key, entry)};
    };
    detail::spawn_op(ex, detail::wait_for_key(std::move(st), std::move(rule), diag), std::move(h));
}

} // namespace conclave
