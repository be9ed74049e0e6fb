// SPDX-License-Identifier: BSL-1.0
// Adding local waiters to the holders in someone else's transaction, and leaving them.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/semaphore/semaphore_handoff.hpp"
#include "recipes/semaphore/semaphore_state.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>

#include <algorithm>

namespace conclave::detail {

using clock = std::chrono::steady_clock;
using phase = semaphore_waiter::phase;

asio::awaitable<error_code> leave_holders(std::shared_ptr<semaphore_hub> hub, std::uint32_t limit,
                                          std::string session, clock::time_point deadline) {
    if (hub->held_here_by(session) || hub->granting_here(session))
        co_return error_code{};
    // No acquire of this session takes a slot meanwhile: this could take it out again.
    const clearing_scope clearing{*hub, session};
    cas_race_backoff race;
    while (clock::now() < deadline) {
        auto [ec, r] =
            co_await call(hub->consul, endpoint::kv_get{hub->lock_key, query_options{}}, deadline);
        if (ec)
            co_return ec;
        if (!r.entry || r.entry->flags != semaphore_flag_value)
            co_return error_code{};
        auto record = semaphore_record::decode(r.entry->value, limit);
        if (!record || record->holders.erase(session) == 0)
            co_return error_code{};
        std::vector<txn_op> ops{txn_op::cas(hub->lock_key, record->encode(), r.entry->modify_index,
                                            semaphore_flag_value)};
        auto [tec, t] = co_await call(hub->consul, endpoint::txn{std::move(ops), {}}, deadline);
        if (tec)
            co_return tec;
        if (t.committed)
            co_return error_code{};
        // Lost a CAS race with another participant: read again, a little later.
        co_await sleep_for(race.next(), deadline);
    }
    co_return make_error_code(errc::timeout);
}

handoff_batch::handoff_batch(std::shared_ptr<semaphore_hub> hub, waiters members,
                             std::uint32_t limit, std::chrono::milliseconds cleanup_timeout)
    : hub_(std::move(hub))
    , members_(std::move(members))
    , limit_(limit)
    , cleanup_timeout_(cleanup_timeout) {
    ++hub_->attempts_in_flight;
    for (auto& m : members_)
        m->state = phase::handing;
}

handoff_batch::~handoff_batch() {
    if (!resolved_)
        unknown();
    --hub_->attempts_in_flight;
    hub_->poke();
}

void handoff_batch::granted(std::uint64_t lock_modify_index) {
    resolved_ = true;
    for (auto& m : members_) {
        if (m->orphaned) {
            undo_in_background(*m);
            continue;
        }
        // A member that is leaving sees this in its cleanup and leaves the holders.
        m->state = phase::granted;
        m->granted_index = lock_modify_index;
        m->wake.notify_all();
    }
}

void handoff_batch::refused() {
    resolved_ = true;
    for (auto& m : members_) {
        m->state = phase::waiting;
        m->wake.notify_all();
    }
}

void handoff_batch::unknown() {
    resolved_ = true;
    for (auto& m : members_) {
        m->state = phase::waiting;
        m->was_handed = true; // its next read (or its cleanup) settles it
        if (m->orphaned)
            undo_in_background(*m);
        m->wake.notify_all();
    }
    if (!members_.empty())
        hub_->forget();
}

void handoff_batch::undo_in_background(const semaphore_waiter& w) {
    asio::co_spawn(hub_->consul.get_executor(),
                   leave_holders(hub_, limit_, w.session->id, clock::now() + cleanup_timeout_),
                   [](std::exception_ptr, error_code) {});
}

handoff_batch::waiters next_in_line(const semaphore_hub& hub, std::uint32_t limit,
                                    const semaphore_record& record, const std::string& skip_session,
                                    std::size_t slots, const std::string& ending,
                                    const std::vector<std::string>* only) {
    handoff_batch::waiters out;
    const auto now = clock::now();
    std::size_t taken = 0;
    for (const auto& w : hub.queue) {
        const auto& id = w->session->id;
        if ((w->limit != limit && w->limit != 0) || !w->can_be_handed(now) || id == skip_session ||
            record.holders.count(id) || hub.clearing.count(id) ||
            (id != ending && hub.held_here_by(id)) ||
            (only && std::find(only->begin(), only->end(), id) == only->end()))
            continue;
        const bool duplicate = std::any_of(out.begin(), out.end(), [&](const auto& o) {
            return o->session->id == w->session->id;
        });
        if (duplicate)
            continue;
        // First come, first served: one that does not fit keeps those behind it waiting
        // too, or a waiter asking for many slots would wait for ever behind smaller ones.
        // (Unless it asks for more than the limit, which it is refused at the front.)
        if (w->slots > limit && limit != 0)
            continue;
        if (taken + w->slots > slots)
            break;
        taken += w->slots;
        out.push_back(w);
    }
    return out;
}

} // namespace conclave::detail
