// SPDX-License-Identifier: BSL-1.0
// What `conclave lock`'s -shared, -exclusive and -n ask it to hold, apart from the command so
// that unit tests reach it without a process.
#pragma once

#include "cli/lock/holder.hpp"

#include <cstdint>
#include <string>

namespace conclave::cli {

struct lock_mode_choice {
    lock_mode mode = lock_mode::plain;
    std::string error; ///< the message for the user, with its newline (empty: no error)
};

/// The mode of -shared and -exclusive with holder limit `limit` (-n, already checked
/// positive): a read-write lock's grant takes neither the other flag nor a limit but 1.
lock_mode_choice choose_lock_mode(bool shared, bool exclusive, std::int64_t limit);

} // namespace conclave::cli
