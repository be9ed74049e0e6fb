// SPDX-License-Identifier: BSL-1.0
// A permit's lost signal (its session in `.lock`'s live holders, session loss, local
// deadline) and release.
#include "consul/spawn.hpp"
#include "recipes/common/grant_loss_wait.hpp"
#include "recipes/semaphore/semaphore_release.hpp"
#include "recipes/semaphore/semaphore_state.hpp"

namespace conclave {

std::uint32_t permit::slots() const noexcept {
    return state_ ? static_cast<const detail::permit_state&>(*state_).slots : 0;
}

} // namespace conclave

namespace conclave::detail {

void permit_state::start_wait_lost(std::shared_ptr<grant_state> self,
                                   asio::any_completion_handler<void(error_code)> h) {
    auto& S = *recipe;
    // Held while `.lock` lists our session among the live holders (with our limit).
    auto still_held = [&S, session = token.session] {
        auto r = interpret(S, S.hub->lock_entry(), S.hub->entries(), nullptr);
        return !r.ec && r.record.holders.count(session) > 0;
    };
    watch_for_loss(*this, std::move(self), still_held, std::move(h));
}

void permit_state::start_release(std::shared_ptr<grant_state> self,
                                 asio::any_completion_handler<void(error_code)> h) {
    spawn_op(executor(), release_permit(std::static_pointer_cast<permit_state>(std::move(self))),
             std::move(h));
}

} // namespace conclave::detail
