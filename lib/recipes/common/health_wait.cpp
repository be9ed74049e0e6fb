// SPDX-License-Identifier: BSL-1.0
#include "recipes/common/health_wait.hpp"
#include "recipes/common/notifier.hpp"

namespace conclave::detail {

asio::awaitable<std::pair<error_code, hold_health>>
wait_health_change(std::shared_ptr<session_state> session, std::shared_ptr<grant_state> grant,
                   hold_health seen) {
    using clock = std::chrono::steady_clock;
    for (;;) {
        const auto now = clock::now();
        const hold_health health = grant ? grant->health(now) : session->health(now);
        if (health != seen)
            co_return std::pair{error_code{}, health};
        // (Cancelled: the wait returns and the next one throws operation_aborted.)
        const auto until = session->next_health_change(now);
        if (grant)
            co_await notifier::wait_any(until, session->changed, grant->changed);
        else
            co_await session->changed.wait(until);
    }
}

} // namespace conclave::detail
