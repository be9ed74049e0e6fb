// SPDX-License-Identifier: BSL-1.0
// conclave::fence and async_fenced_put: the resource side of fencing tokens.
#include "consul/spawn.hpp"

#include <conclave/fence.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

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

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// Why the write was refused, for with_diagnostics.
void describe(diagnostics* diag, std::string why) {
    if (diag)
        diag->client_message = std::move(why);
}

// One read and one check-and-set. Empty when another writer came between (try again).
asio::awaitable<std::optional<error_code>> try_fenced_put(client& c, const std::string& key,
                                                          const std::string& value,
                                                          std::uint64_t index, diagnostics* diag) {
    auto read = co_await c.async_kv_get(key, query_options{}, tuple_awaitable);
    if (std::get<0>(read))
        co_return std::get<0>(read);
    const auto& current = std::get<1>(read).entry;
    const std::uint64_t fenced_at = current ? current->flags : 0;
    if (index < fenced_at) {
        describe(diag, "fenced out: " + key + " was written with token " +
                           std::to_string(fenced_at) + ", newer than " + std::to_string(index));
        co_return make_error_code(errc::lock_lost);
    }
    const auto options =
        kv_put_options{}.with_cas(current ? current->modify_index : 0).with_flags(index);
    auto write = co_await c.async_kv_put(key, value, options, tuple_awaitable);
    if (std::get<0>(write))
        co_return std::get<0>(write);
    if (std::get<1>(write))
        co_return error_code{};
    co_return std::nullopt;
}

asio::awaitable<error_code> fenced_put(client c, std::string key, std::string value,
                                       std::string lock_key, std::uint64_t index,
                                       diagnostics* diag) {
    if (index == 0) {
        describe(diag, "fenced put to " + key + " with an empty token");
        co_return make_error_code(errc::invalid_argument);
    }
    if (key == lock_key) {
        describe(diag, "fenced put to the lock's own key " + key + " (it would break the lock)");
        co_return make_error_code(errc::invalid_argument);
    }
    // Writers racing for the key make the check-and-set fail; each retry reads afresh. The
    // race has a winner every round, so it ends; the bound is for a key written nonstop.
    const auto until = std::chrono::steady_clock::now() + c.config().request_timeout;
    std::optional<error_code> outcome;
    while (!outcome && std::chrono::steady_clock::now() < until)
        outcome = co_await try_fenced_put(c, key, value, index, diag);
    if (outcome)
        co_return *outcome;
    describe(diag, "fenced put to " + key + ": other writers kept changing it");
    co_return make_error_code(errc::timeout);
}

} // namespace

namespace detail {

void fenced_put_impl(client c, std::string key, std::string value, fencing_token t,
                     diagnostics_route* route, asio::any_completion_handler<void(error_code)> h) {
    auto ex = c.get_executor();
    auto* diag = diagnostics_route::target(route, nullptr);
    spawn_op(ex,
             fenced_put(std::move(c), std::move(key), std::move(value), std::move(t.key),
                        t.modify_index, diag),
             std::move(h));
}

} // namespace detail

} // namespace conclave
