// SPDX-License-Identifier: BSL-1.0
// conclave::fence and async_fenced_put: the resource side of fencing tokens.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "recipes/common/cas_race_backoff.hpp"
#include "recipes/common/deadline.hpp"

#include <conclave/fence.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <tuple>

namespace conclave {

bool fence::admit(const std::string& resource, const fencing_token& token) {
    if (token.modify_index == 0)
        return false;
    auto [it, added] = last_.try_emplace(resource, token.modify_index);
    if (added)
        return true;
    if (token.modify_index < it->second)
        return false;
    it->second = token.modify_index;
    return true;
}

std::uint64_t fence::last(const std::string& resource) const {
    const auto it = last_.find(resource);
    return it == last_.end() ? 0 : it->second;
}

void fence::forget(const std::string& resource) {
    last_.erase(resource);
}

namespace {

using clock = std::chrono::steady_clock;

// Why the write was refused, for with_diagnostics.
void describe(diagnostics* diag, std::string why) {
    if (diag)
        diag->client_message = std::move(why);
}

struct fenced_write {
    std::string key, value;
    std::string lock_key, session; ///< the token's grant
    std::uint64_t index = 0;       ///< the token's modify_index
};

// One read and one transaction. Empty when another writer came between (try again).
asio::awaitable<std::optional<error_code>>
try_fenced_put(client& c, const fenced_write& w, clock::time_point until, diagnostics* diag) {
    auto [read_error, read] =
        co_await detail::call(c, detail::endpoint::kv_get{w.key, query_options{}}, until);
    if (read_error)
        co_return read_error;
    const auto& current = read.entry;
    if (current && (!current->session.empty() || current->flags == lock_flag_value ||
                    current->flags == semaphore_flag_value)) {
        describe(diag, w.key + " is a lock's or a semaphore's key, not a fenced value");
        co_return make_error_code(errc::conflict);
    }
    const std::uint64_t fenced_at = current ? current->flags : 0;
    if (w.index < fenced_at) {
        describe(diag, "fenced out: " + w.key + " was written with token " +
                           std::to_string(fenced_at) + ", newer than " + std::to_string(w.index));
        co_return make_error_code(errc::lock_lost);
    }
    // The write applies only while the token's session still holds its lock: a paused holder
    // is refused also before its successor's first write.
    std::vector<txn_op> ops;
    ops.push_back(txn_op::check_session(w.lock_key, w.session));
    ops.push_back(txn_op::cas(w.key, w.value, current ? current->modify_index : 0, w.index));
    auto [ec, t] = co_await detail::call(c, detail::endpoint::txn{std::move(ops), {}}, until);
    if (ec)
        co_return ec;
    if (t.committed)
        co_return error_code{};
    if (std::any_of(t.errors.begin(), t.errors.end(),
                    [](const txn_error& e) { return e.op_index == 0; })) {
        describe(diag, "fenced out: the token's session no longer holds " + w.lock_key);
        co_return make_error_code(errc::lock_lost);
    }
    co_return std::nullopt; // the check-and-set lost a race
}

asio::awaitable<error_code> fenced_put(client c, fenced_write w, diagnostics* diag) {
    if (w.index == 0 || w.session.empty()) {
        describe(diag, "fenced put to " + w.key + " with an empty token");
        co_return make_error_code(errc::invalid_argument);
    }
    if (w.key == w.lock_key || w.key.starts_with(w.lock_key + "/")) {
        describe(diag, "fenced put to " + w.key + ", a key of the lock itself");
        co_return make_error_code(errc::invalid_argument);
    }
    // Writers racing for the key make the check-and-set fail; each retry reads afresh after
    // a random pause. The bound is for a key written nonstop.
    const auto until = clock::now() + c.config().request_timeout;
    detail::cas_race_backoff race;
    asio::steady_timer pause{c.get_executor()};
    while (clock::now() < until) {
        auto outcome = co_await try_fenced_put(c, w, until, diag);
        if (outcome)
            co_return *outcome;
        pause.expires_after(race.next());
        co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    describe(diag, "fenced put to " + w.key + ": other writers kept changing it");
    co_return make_error_code(errc::timeout);
}

} // namespace

namespace detail {

void fenced_put_impl(client c, std::string key, std::string value, fencing_token t,
                     diagnostics_route* route, asio::any_completion_handler<void(error_code)> h) {
    auto ex = c.get_executor();
    auto* diag = diagnostics_route::target(route, nullptr);
    fenced_write w{std::move(key), std::move(value), std::move(t.key), std::move(t.session),
                   t.modify_index};
    spawn_op(ex, fenced_put(std::move(c), std::move(w), diag), std::move(h));
}

} // namespace detail

} // namespace conclave
