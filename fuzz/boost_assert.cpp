// SPDX-License-Identifier: BSL-1.0
// Boost's failed assertions in the fuzz build (BOOST_ENABLE_ASSERT_HANDLER, set by the fuzz
// preset): Boost's own checks stay on, so that misuse of Beast, Asio or JSON by conclave is
// a crash the fuzzer reports; each one aborts, except the Boost bugs listed here, whose
// assertion is wrong and whose code goes on correctly (as in a build with NDEBUG). With
// FUZZ_BOOST_ASSERT_ALL=1 those abort too (to see whether a Boost still has the bug:
// fuzz/crashes/ holds an input for each).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

namespace {

struct known_false_assertion {
    const char* file_suffix;
    const char* expr;
};

constexpr known_false_assertion known[] = {
    // Beast before Boost 1.86 (github.com/boostorg/beast/pull/2861): the parser asserts that
    // it is given 5 bytes again after it asked for more with "0\r\n" of a chunked body's end
    // (no chunk before it); a peer that sends the final "\r\n" a byte at a time reaches it.
    {"boost/beast/http/impl/basic_parser.ipp", "n >= 5"},
};

bool ends_with(const char* s, const char* suffix) {
    const std::size_t n = std::strlen(s), m = std::strlen(suffix);
    return n >= m && std::strcmp(s + n - m, suffix) == 0;
}

[[noreturn]] void fail(const char* expr, const char* msg, const char* function, const char* file,
                       long line) {
    std::fprintf(stderr, "%s:%ld: %s: Boost assertion `%s' failed%s%s\n", file, line, function,
                 expr, msg ? ": " : "", msg ? msg : "");
    std::abort();
}

} // namespace

namespace boost {

void assertion_failed(const char* expr, const char* function, const char* file, long line) {
    static const bool all = std::getenv("FUZZ_BOOST_ASSERT_ALL") != nullptr;
    for (const auto& k : all ? std::span<const known_false_assertion>() : std::span(known))
        if (std::strcmp(expr, k.expr) == 0 && ends_with(file, k.file_suffix))
            return;
    fail(expr, nullptr, function, file, line);
}

void assertion_failed_msg(const char* expr, const char* msg, const char* function, const char* file,
                          long line) {
    fail(expr, msg, function, file, line);
}

} // namespace boost
