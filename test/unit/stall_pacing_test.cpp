// SPDX-License-Identifier: BSL-1.0
// stall_pacing: Consul's blocking-query rules for the shared queries (no index below 1, and
// reads answered without news spaced by a jittered, capped, doubling pause).
#include "consul/blocking/stall_pacing.hpp"
#include "support/catch.hpp"

using conclave::detail::stall_pacing;
using namespace std::chrono_literals;

namespace {
const stall_pacing::clock::time_point t0{};
}

TEST_CASE("stall_pacing: 0 is never a blocking index", "[unit][index]") {
    CHECK(stall_pacing::blocking_index(0) == 1);
    CHECK(stall_pacing::blocking_index(1) == 1);
    CHECK(stall_pacing::blocking_index(42) == 42);
}

TEST_CASE("stall_pacing: news and normal timeouts go on at once, early replies without news "
          "wait longer each time up to the cap",
          "[unit][index]") {
    stall_pacing pacing{50ms, 2s, 7};
    // A plain read, an advance, a whole wait with no change: at once.
    CHECK(pacing.on_reply(0, 5, 15s, t0, t0 + 1ms) == t0 + 1ms);
    CHECK(pacing.on_reply(5, 6, 15s, t0, t0 + 2ms) == t0 + 2ms);
    CHECK(pacing.on_reply(6, 6, 15s, t0, t0 + 15s) == t0 + 15s);
    CHECK(pacing.stalls() == 0);
    // The same index, or 0, or a lower one, long before the wait: paced from the start.
    stall_pacing::clock::duration last{};
    for (unsigned n = 1; n <= 8; ++n) {
        const std::uint64_t index = n % 3 == 0 ? 0 : (n % 3 == 1 ? 6 : 4);
        const auto next = pacing.on_reply(6, index, 15s, t0, t0 + 1ms);
        CHECK(pacing.stalls() == n);
        const auto b = pacing.backoff(n);
        CHECK(next - t0 >= b / 2);
        CHECK(next - t0 <= b);
        CHECK(b <= stall_pacing::clock::duration{2s});
        CHECK(b >= last);
        last = b;
    }
    CHECK(pacing.backoff(8) == stall_pacing::clock::duration{2s});
    // News ends the run of stalls.
    CHECK(pacing.on_reply(6, 9, 15s, t0, t0 + 1ms) == t0 + 1ms);
    CHECK(pacing.stalls() == 0);
}
