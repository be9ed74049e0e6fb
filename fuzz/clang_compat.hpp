// SPDX-License-Identifier: BSL-1.0
// Force-included (-include) into the dev agent's sources and fuzz_agent_request in the fuzz
// build only: lets clang compile devagent/src/gojson.hpp.
//
// TODO(fuzz): remove once gojson.hpp compiles with clang. Its
//     struct value { ...; std::vector<std::pair<std::string, value>> members; };
// is accepted by g++ 12 but not by clang 14 (nor 16) with libstdc++ 12 in C++20: defining
// value's implicit default constructor instantiates std::pair<std::string, value>, whose
// conditionally explicit default constructor asks whether `value` is implicitly default
// constructible while that very constructor is being defined ("arithmetic on a pointer to
// an incomplete type 'std::pair<...>'"). Answering the question here, before gojson.hpp is
// read, breaks the cycle; the answer is the true one (every member has a default).
#pragma once

#include <type_traits>

namespace conclave::dev::detail::gojson {
struct value;
}

template <>
struct std::__is_implicitly_default_constructible<conclave::dev::detail::gojson::value>
    : std::true_type {};
