// SPDX-License-Identifier: BSL-1.0
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "recipes/common/acquire_driver.hpp"
#include "recipes/common/acquire_policy.hpp"
#include "recipes/common/contender.hpp"

#include <atomic>

namespace conclave::detail {

std::string unique_contender_key(const std::string& prefix, const std::string& session) {
    static std::atomic<std::uint64_t> sequence{0};
    return prefix + session + "." + std::to_string(++sequence);
}

asio::awaitable<std::pair<error_code, std::uint64_t>>
write_contender(client c, std::vector<txn_op> ops, session_state& s, deadline_t deadline) {
    // The one write a spent budget still allows gets a little time, as an attempt does.
    auto [ec, t] = co_await call(c, endpoint::txn{std::move(ops), {}}, attempt_deadline(deadline));
    if (ec)
        co_return std::pair{ec, std::uint64_t{0}};
    if (t.committed && !t.results.empty())
        co_return std::pair{error_code{}, t.results.back().create_index};
    switch (classify_refusal(t.errors)) {
    case refusal::session_gone:
        s.gone_on_server = true;
        s.mark_lost(make_error_code(errc::session_invalidated));
        co_return std::pair{s.lost, std::uint64_t{0}};
    case refusal::denied:
        co_return std::pair{make_error_code(errc::permission_denied), std::uint64_t{0}};
    default:
        co_return std::pair{make_error_code(errc::conflict), std::uint64_t{0}};
    }
}

} // namespace conclave::detail
