// SPDX-License-Identifier: BSL-1.0
// semaphore_hub: the prefix's state as read by the shared list query and patched by local
// transactions.
#include "recipes/semaphore/semaphore_hub.hpp"
#include "recipes/semaphore/semaphore_record.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace conclave::detail {

std::shared_ptr<semaphore_hub> semaphore_hub::of(const client& c, const std::string& prefix,
                                                 settings s) {
    return find_or_make<semaphore_hub>(c, "semaphore-hub:" + prefix, [&] {
        return std::make_shared<semaphore_hub>(c, prefix, s);
    });
}

semaphore_hub::semaphore_hub(client c, std::string p, settings s)
    : shared_query(std::move(c), "semaphore-hub:" + p, s)
    , prefix(std::move(p))
    , lock_key(join_key(prefix, ".lock")) {}

std::string semaphore_hub::contender_key(const std::string& session) const {
    return join_key(prefix, session);
}

const kv_entry* semaphore_hub::lock_entry() const {
    for (const auto& e : entries_)
        if (e.key == lock_key)
            return &e;
    return nullptr;
}

void semaphore_hub::saw_write(const kv_entry& lock, std::uint64_t based_on,
                              const std::vector<std::string>& added_sessions,
                              const std::string& deleted_contender,
                              const std::vector<std::string>& swept) {
    if (!known() || lock.modify_index <= state_index()) {
        // Nothing to patch (or a read already brought the write, or a later state): the
        // query brings the news.
        poke();
        return;
    }
    const auto* known_lock = lock_entry();
    if ((known_lock ? known_lock->modify_index : 0) != based_on) {
        // Written on a `.lock` newer than ours (read afresh after a lost race): it may list
        // holders whose contender keys we have not seen, which a CAS built on the patch
        // would prune as dead. Read everything again instead.
        forget();
        return;
    }
    std::erase_if(entries_, [&](const kv_entry& e) {
        return e.key == lock_key || e.key == deleted_contender ||
               std::find(swept.begin(), swept.end(), e.key) != swept.end();
    });
    entries_.push_back(lock);
    // The sessions just added hold their contender keys (written before they were
    // enqueued), possibly after our last read: without them, the next CAS built on this
    // state would prune them as dead.
    for (const auto& s : added_sessions) {
        const auto k = contender_key(s);
        const bool listed = std::any_of(entries_.begin(), entries_.end(),
                                        [&](const kv_entry& e) { return e.key == k; });
        if (!listed) {
            kv_entry e;
            e.key = k;
            e.session = s;
            e.flags = semaphore_flag_value;
            entries_.push_back(std::move(e));
        }
    }
    // Only `.lock` and the keys above are as of the write: the next read brings the rest.
    accept_partial_write(lock.modify_index);
    poke();
}

std::shared_ptr<grant_state> semaphore_hub::permit_here(const std::string& session) const {
    const auto it = local_permits.find(session);
    if (it == local_permits.end())
        return nullptr;
    auto p = it->second.lock();
    return p && !p->released && !p->lost ? p : nullptr;
}

bool semaphore_hub::granting_here(const std::string& session) const {
    return std::any_of(queue.begin(), queue.end(), [&](const auto& w) {
        return w->state != semaphore_waiter::phase::waiting && w->session->id == session;
    });
}

bool semaphore_hub::waits_here(const std::string& session) const {
    return std::any_of(queue.begin(), queue.end(),
                       [&](const auto& w) { return w->session->id == session; });
}

std::uint32_t semaphore_hub::slots_asked(const std::string& session) const {
    for (const auto& w : queue)
        if (w->session->id == session)
            return w->slots;
    return 1;
}

void semaphore_hub::permit_dropped(const std::string& session) {
    // (Waiters away from the front sleep on their own notifiers: poke() wakes the front.)
    for (const auto& w : queue) {
        if (w->session->id == session) {
            w->recheck = true;
            w->wake.notify_all();
        }
    }
    poke();
}

clearing_scope::clearing_scope(semaphore_hub& hub, std::string session)
    : hub_(hub)
    , session_(std::move(session)) {
    if (!session_.empty())
        ++hub_.clearing[session_];
}

clearing_scope::~clearing_scope() {
    if (session_.empty())
        return;
    const auto it = hub_.clearing.find(session_);
    if (--it->second == 0)
        hub_.clearing.erase(it);
    hub_.poke();
}

asio::awaitable<error_code> semaphore_hub::read_once(query_options q,
                                                     asio::cancellation_slot stop) {
    auto token = asio::bind_cancellation_slot(stop, asio::as_tuple(asio::use_awaitable));
    auto [ec, r] = co_await consul.async_kv_list(join_key(prefix, ""), std::move(q), token);
    if (!ec && accept_read(r.meta.index)) {
        entries_ = std::move(r.entries);
        poke();
    }
    co_return ec;
}

} // namespace conclave::detail
