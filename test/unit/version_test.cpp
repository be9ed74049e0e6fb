// SPDX-License-Identifier: BSL-1.0
// The version is written once, in <conclave/version.hpp>: the string, CMake's project
// version (the package, pkg-config, the API reference) and `conclave --version` (cli/
// args_test) all come from its three numbers.
#include "support/catch.hpp"

#include <conclave/version.hpp>

#include <string>

TEST_CASE("the version string is made of the version numbers, which CMake reads", "[version]") {
    const std::string numbers = std::to_string(CONCLAVE_VERSION_MAJOR) + "." +
                                std::to_string(CONCLAVE_VERSION_MINOR) + "." +
                                std::to_string(CONCLAVE_VERSION_PATCH);
    CHECK(std::string(CONCLAVE_VERSION_STRING) == numbers);
    CHECK(std::string(CONCLAVE_TEST_PROJECT_VERSION) == numbers);
    CHECK(CONCLAVE_VERSION ==
          CONCLAVE_VERSION_MAJOR * 10000 + CONCLAVE_VERSION_MINOR * 100 + CONCLAVE_VERSION_PATCH);
}
