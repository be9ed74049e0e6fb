// SPDX-License-Identifier: BSL-1.0
#include "cli/lock/mode.hpp"

namespace conclave::cli {

lock_mode_choice choose_lock_mode(bool shared, bool exclusive, std::int64_t limit) {
    lock_mode_choice c;
    if (shared && exclusive) {
        c.error = "-shared and -exclusive cannot be combined: a holder reads or writes\n";
        return c;
    }
    if ((shared || exclusive) && limit != 1) {
        c.error = "-n=" + std::to_string(limit) + " cannot be combined with -" +
                  (shared ? "shared" : "exclusive") + ": a read-write lock has no holder limit\n";
        return c;
    }
    c.mode = shared ? lock_mode::shared : exclusive ? lock_mode::exclusive : lock_mode::plain;
    return c;
}

} // namespace conclave::cli
