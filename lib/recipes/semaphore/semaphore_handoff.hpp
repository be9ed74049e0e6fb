// SPDX-License-Identifier: BSL-1.0
// Adding local waiters to a semaphore's holders in someone else's transaction (the front
// waiter's CAS, or a local holder's release), and taking a session out of the holders again.
#pragma once

#include "recipes/semaphore/semaphore_hub.hpp"
#include "recipes/semaphore/semaphore_record.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <vector>

namespace conclave::detail {

/// Takes `session` out of `.lock`'s holders (GET, then CAS, retried after lost races with
/// a jittered pause). Bounded by `deadline`; harmless when it is not a holder. Nothing is
/// done while the slot of `session` is a local permit's, or is being granted here: it is
/// theirs, not the leaving acquire's.
asio::awaitable<error_code> leave_holders(std::shared_ptr<semaphore_hub> hub, std::uint32_t limit,
                                          std::string session,
                                          std::chrono::steady_clock::time_point deadline);

/// The local waiters one transaction on `.lock` adds to the holders, for that transaction's
/// lifetime: they are marked `handing` (nobody else adds them, they wait for the verdict),
/// and the hub has an attempt in flight. Say granted() or refused() once the transaction
/// answered; gone without a verdict (error, cancellation) the outcome is unknown: the
/// waiters read the prefix again, which tells them whether they hold a slot.
class handoff_batch {
public:
    using waiters = std::vector<std::shared_ptr<semaphore_waiter>>;

    handoff_batch(std::shared_ptr<semaphore_hub> hub, waiters members, std::uint32_t limit,
                  std::chrono::milliseconds cleanup_timeout);
    ~handoff_batch();
    handoff_batch(const handoff_batch&) = delete;
    handoff_batch& operator=(const handoff_batch&) = delete;

    const waiters& members() const noexcept { return members_; }

    /// The transaction committed; `.lock` got this ModifyIndex (the members' fencing index).
    void granted(std::uint64_t lock_modify_index);
    /// The transaction was refused (a CAS race): nothing changed.
    void refused();

private:
    void unknown();
    /// A member that stopped waiting for the verdict but may hold a slot: undo it.
    void undo_in_background(const semaphore_waiter& w);

    std::shared_ptr<semaphore_hub> hub_;
    waiters members_;
    std::uint32_t limit_;
    std::chrono::milliseconds cleanup_timeout_;
    bool resolved_ = false;
};

/// Local waiters that may join a transaction on `.lock`, in arrival order, asking for at
/// most `slots` together (the first that does not fit ends the list): contender key written,
/// waiting, of an object with `limit` (the record's) or a resizable one, not `skip_session` (the
/// session the transaction adds for itself), not already in `record`, one per session, and none of
/// a session with a live local permit or being cleared (semaphore_hub::slot_busy): adding a session
/// that holds a slot changes nothing, so two acquires would share that slot. `ending`: the session
/// whose permit this transaction releases; its waiters may take its slot (one after the other).
/// `only` (fair mode's first in line): when given, no waiter of another session.
handoff_batch::waiters next_in_line(const semaphore_hub& hub, std::uint32_t limit,
                                    const semaphore_record& record, const std::string& skip_session,
                                    std::size_t slots, const std::string& ending = {},
                                    const std::vector<std::string>* only = nullptr);

} // namespace conclave::detail
