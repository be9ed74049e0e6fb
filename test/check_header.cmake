# SPDX-License-Identifier: BSL-1.0
# Compiles one public header on its own and fails if it drags in Beast or Boost.JSON.
# Variables: CXX, INCLUDE_DIRS (separated by ':'), HEADER (relative to one of them).
string(REPLACE ":" ";" include_flags "${INCLUDE_DIRS}")
list(TRANSFORM include_flags PREPEND -I)
execute_process(
    COMMAND ${CXX} -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Werror
            -DBOOST_ASIO_SEPARATE_COMPILATION -DBOOST_ASIO_NO_DEPRECATED
            ${include_flags} -x c++ -include ${HEADER} /dev/null
    RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${HEADER} does not compile on its own:\n${err}")
endif()
execute_process(
    COMMAND ${CXX} -std=c++20 -M -DBOOST_ASIO_SEPARATE_COMPILATION ${include_flags}
            -x c++ -include ${HEADER} /dev/null
    OUTPUT_VARIABLE deps RESULT_VARIABLE rc)
if(deps MATCHES "boost/beast/" OR deps MATCHES "boost/json/")
    message(FATAL_ERROR "${HEADER} includes Beast or Boost.JSON; public headers must not")
endif()
message(STATUS "${HEADER}: self-contained, no Beast/JSON")
