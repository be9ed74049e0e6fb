// SPDX-License-Identifier: BSL-1.0
// Writes text into a buffer sized beforehand for all of it: each piece a store or a memcpy
// of a known length, where std::string::append costs a call, a capacity check and, for a
// literal, a strlen. Used where a message is written per request (the client's request
// head and txn body, the agent's usual txn answer).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace conclave::codec {

class cursor {
public:
    /// The most digits number() writes.
    static constexpr std::size_t max_digits = 20;

    explicit cursor(char* p)
        : p_(p) {}

    /// Where the next byte goes: the end of what was written.
    char* end() const { return p_; }

    void put(char c) { *p_++ = c; }

    /// A literal, its length known at compile time.
    template <std::size_t N>
    void put(const char (&text)[N]) {
        std::memcpy(p_, text, N - 1);
        p_ += N - 1;
    }

    /// A view. An empty one may be default-constructed, its data() null, which memcpy must
    /// not get even for no bytes.
    void put(std::string_view s) {
        if (!s.empty())
            std::memcpy(p_, s.data(), s.size());
        p_ += s.size();
    }

    void number(std::uint64_t v) { p_ = std::to_chars(p_, p_ + max_digits, v).ptr; }

protected:
    char* p_;
};

} // namespace conclave::codec
