// SPDX-License-Identifier: BSL-1.0
// The line of a client's multi-lock acquires: an acquire does not try while an older one in
// this process, over a key of its set, could take all of its own keys now. Without it, a
// holder that releases and acquires again takes the keys before the waiters it woke have
// read them (as the benchmark showed: a few contenders got every grant); with it, local
// acquires over shared keys are served in the order they came.
//
// Only an older acquire that could go now holds a younger one back, never one that waits
// for a key held elsewhere: a task holding B that asks for A must not wait behind an older
// acquire of {A, B}, which waits for that task's B (a waiting acquire holds nothing, and
// must not behave as if it did).
#pragma once

#include "recipes/common/acquire_policy.hpp"
#include "recipes/common/notifier.hpp"
#include "recipes/common/shared_query.hpp"
#include "recipes/multi_lock/multi_lock_state.hpp"

#include <algorithm>
#include <list>
#include <memory>
#include <string>
#include <vector>

namespace conclave::detail {

class multi_lock_line {
public:
    /// The line of `c`'s multi-locks (one per client).
    static std::shared_ptr<multi_lock_line> of(const client& c) {
        auto& slot = shared_slot(c, "multi-lock-line");
        if (auto existing = std::static_pointer_cast<multi_lock_line>(slot.lock()))
            return existing;
        auto line = std::make_shared<multi_lock_line>();
        slot = line;
        return line;
    }

private:
    struct waiter {
        const multi_lock_state* lock; ///< kept alive by its acquire, as is the session
        const std::string* session;
    };

public:
    /// An acquire's place (its multi-lock and session), from its start to its end.
    class place {
    public:
        place(std::shared_ptr<multi_lock_line> line, const multi_lock_state& m,
              const std::string& session)
            : line_(std::move(line))
            , it_(line_->waiters_.insert(line_->waiters_.end(), waiter{&m, &session})) {}
        ~place() {
            line_->waiters_.erase(it_);
            line_->changed.notify_all();
        }
        place(const place&) = delete;
        place& operator=(const place&) = delete;

        /// No older acquire of this process over one of our keys could go now.
        bool my_turn() const {
            for (auto it = line_->waiters_.begin(); it != it_; ++it)
                if (overlap(it->lock->keys, it_->lock->keys) && could_go(*it))
                    return false;
            return true;
        }
        notifier& changed() const { return line_->changed; }

    private:
        std::shared_ptr<multi_lock_line> line_;
        std::list<waiter>::iterator it_;
    };

    /// Wakes the acquires behind one that left.
    notifier changed;

private:
    // Whether two sorted key sets share a key.
    static bool overlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
        auto i = a.begin();
        auto j = b.begin();
        while (i != a.end() && j != b.end()) {
            if (*i == *j)
                return true;
            *i < *j ? ++i : ++j;
        }
        return false;
    }

    // Whether `w` could take every key now, as its hubs know them: each free, or held by its
    // session with no grant of this process on it. A key not read yet, or with a
    // transaction in flight, may be about to let it go: it goes first (for a moment: a read
    // and a transaction end), so that a younger acquire does not slip in meanwhile.
    static bool could_go(const waiter& w) {
        for (const auto& hub : w.lock->hubs) {
            if (!hub->known() || hub->attempt_in_flight)
                continue;
            const kv_entry* e = hub->entry() ? &*hub->entry() : nullptr;
            switch (judge_key(e, *w.session, lock_flag_value)) {
            case key_verdict::free:
                break;
            case key_verdict::ours:
                if (hub->held_here_by(*w.session))
                    return false;
                break;
            default:
                return false;
            }
        }
        return true;
    }

    std::list<waiter> waiters_;
};

} // namespace conclave::detail
