// SPDX-License-Identifier: BSL-1.0
// The enters of double barriers under way in this process, by prefix and session: a session
// has one participant key per prefix, so two concurrent enters with it would share that
// key, and whichever ended first (a failure, a cancellation) would delete the key the other
// counts on. The second is refused instead.
#pragma once

#include <string>

namespace conclave::detail {

/// Claims (prefix, session) for one enter while it lives; copies are not claims.
class enter_claim {
public:
    enter_claim(std::string prefix, std::string session);
    ~enter_claim();
    enter_claim(const enter_claim&) = delete;
    enter_claim& operator=(const enter_claim&) = delete;

    /// False when another enter of the session on the prefix is under way (nothing claimed).
    explicit operator bool() const noexcept { return claimed_; }

private:
    std::string name_;
    bool claimed_ = false;
};

} // namespace conclave::detail
