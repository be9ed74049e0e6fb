// SPDX-License-Identifier: BSL-1.0
// Catch2 for the tests, v2 (Debian 12) or v3 (newer distributions): test/CMakeLists.txt sets
// CONCLAVE_TEST_CATCH2_MAJOR from the Catch2 it found. The tests include this header, never
// Catch2's own, and use the names below where the two versions spell a thing differently.
#pragma once

#if CONCLAVE_TEST_CATCH2_MAJOR == 3
#include <catch2/catch_all.hpp>
#elif CONCLAVE_TEST_CATCH2_MAJOR == 2
#include <catch2/catch.hpp>
#else
#error "CONCLAVE_TEST_CATCH2_MAJOR must be 2 or 3 (test/CMakeLists.txt sets it)"
#endif

#include <string>

namespace conclave::test {

#if CONCLAVE_TEST_CATCH2_MAJOR == 3
// v3 moved Approx from the global namespace into Catch.
using approx = Catch::Approx;
// v3 renamed the substring matcher: Contains now matches an element of a range.
inline auto contains_text(const std::string& text) {
    return Catch::Matchers::ContainsSubstring(text);
}
#else
using approx = Catch::Detail::Approx; // (v2 also exports it as the global ::Approx)
inline auto contains_text(const std::string& text) {
    return Catch::Matchers::Contains(text);
}
#endif

} // namespace conclave::test
