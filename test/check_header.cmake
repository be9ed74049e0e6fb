# SPDX-License-Identifier: BSL-1.0
# Compiles one public header on its own and fails if it drags in Beast or Boost.JSON.
# Variables: CXX, INCLUDE_DIR, HEADER (relative to INCLUDE_DIR).
execute_process(
    COMMAND ${CXX} -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Werror
            -DBOOST_ASIO_SEPARATE_COMPILATION -DBOOST_ASIO_NO_DEPRECATED
            -I${INCLUDE_DIR} -x c++ -include ${HEADER} /dev/null
    RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${HEADER} does not compile on its own:\n${err}")
endif()
execute_process(
    COMMAND ${CXX} -std=c++20 -M -DBOOST_ASIO_SEPARATE_COMPILATION -I${INCLUDE_DIR}
            -x c++ -include ${HEADER} /dev/null
    OUTPUT_VARIABLE deps RESULT_VARIABLE rc)
if(deps MATCHES "boost/beast/" OR deps MATCHES "boost/json/")
    message(FATAL_ERROR "${HEADER} includes Beast or Boost.JSON; public headers must not")
endif()
message(STATUS "${HEADER}: self-contained, no Beast/JSON")
