# SPDX-License-Identifier: BSL-1.0
# Fails when a test name of EXE contains ';': CTest splits a registered name there, and the
# halves then match no test case (each fails as "No tests ran").
# (Catch2 v2 exits with the number of tests listed: the status says nothing here.)
execute_process(COMMAND "${EXE}" --list-test-names-only OUTPUT_VARIABLE names)
if(names STREQUAL "")
    message(FATAL_ERROR "${EXE} --list-test-names-only listed nothing")
endif()
string(REPLACE ";" "<semicolon>" names "${names}")
string(REGEX MATCHALL "[^\n]*<semicolon>[^\n]*" bad "${names}")
if(bad)
    string(REPLACE "<semicolon>" ";" bad "${bad}")
    message(FATAL_ERROR "test names with ';' (CTest would split them): ${bad}")
endif()
