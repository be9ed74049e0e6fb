// SPDX-License-Identifier: BSL-1.0
// The line of a client's multi-lock acquires: an acquire tries only when no older one in
// this process waits for a key of its set. Without it, a holder that releases and acquires
// again takes the keys before the waiters it woke have read them (as the benchmark showed:
// a few contenders got every grant); with it, local acquires over shared keys are served in
// the order they came. Waits point to older acquires only, so none waits for itself.
#pragma once

#include "recipes/common/notifier.hpp"
#include "recipes/common/shared_query.hpp"

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

    /// An acquire's place (its sorted keys), from its start to its end.
    class place {
    public:
        place(std::shared_ptr<multi_lock_line> line, const std::vector<std::string>& keys)
            : line_(std::move(line))
            , it_(line_->waiters_.insert(line_->waiters_.end(), &keys)) {}
        ~place() {
            line_->waiters_.erase(it_);
            line_->changed.notify_all();
        }
        place(const place&) = delete;
        place& operator=(const place&) = delete;

        /// No older acquire of this process waits for one of our keys.
        bool my_turn() const {
            for (auto it = line_->waiters_.begin(); it != it_; ++it)
                if (overlap(**it, **it_))
                    return false;
            return true;
        }
        notifier& changed() const { return line_->changed; }

    private:
        std::shared_ptr<multi_lock_line> line_;
        std::list<const std::vector<std::string>*>::iterator it_;
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

    std::list<const std::vector<std::string>*> waiters_;
};

} // namespace conclave::detail
