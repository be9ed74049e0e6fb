# SPDX-License-Identifier: BSL-1.0
# Fails when a test name of EXE contains ';': CTest splits a registered name there, and the
# halves then match no test case (each fails as "No tests ran").
#   EXE, CATCH2_MAJOR (2 or 3: the Catch2 EXE is built with)
# (Catch2 v2 exits with the number of tests listed, v3 with 0: the status says nothing here.)
include(${CMAKE_CURRENT_LIST_DIR}/catch_options.cmake)
execute_process(COMMAND "${EXE}" ${catch_list_names} OUTPUT_VARIABLE names)
if(names STREQUAL "")
    message(FATAL_ERROR "${EXE} listed no test name")
endif()
string(REPLACE ";" "<semicolon>" names "${names}")
string(REGEX MATCHALL "[^\n]*<semicolon>[^\n]*" bad "${names}")
if(bad)
    string(REPLACE "<semicolon>" ";" bad "${bad}")
    message(FATAL_ERROR "test names with ';' (CTest would split them): ${bad}")
endif()
