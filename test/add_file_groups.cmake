# SPDX-License-Identifier: BSL-1.0
# Run by CMake after a test executable is built (test/CMakeLists.txt, conclave_test_groups):
# writes OUT, the CTest registrations of one test per source file of EXE that has test cases
# matching SPEC. Each such test runs that file's matching cases in one process, which
# starts one real Consul and cleans it between them (support/consul_server.hpp).
#   EXE, SPEC (a Catch test spec, e.g. "~[dev-agent-only]"), PREFIX (of the test names),
#   LABEL, ENVIRONMENT, TIMEOUT, OUT, CATCH2_MAJOR (2 or 3: the Catch2 EXE is built with)
# Catch's -# (--filenames-as-tags) tags each case [#<file name without extension>]. A group
# leaves out hidden cases ([.]: its tag alone would take them in), and a case in it that skips
# fails the group: the registrations leave out what could only skip (test/CMakeLists.txt), so
# a skip there is a mistake, which the per-case registrations would show as a skip.
# (Catch takes its options before the test spec.)
execute_process(COMMAND "${EXE}" "-#" --list-tags "${SPEC}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE status)
# (Catch2 v2 exits with the number of tags it listed, v3 with 0: the status says nothing here.
# Both print each tag as [#name].)
# Each file tag on a line of its own, after its count of cases: "  12  [#lock_test]".
string(REGEX MATCHALL "[0-9]+  \\[#[^]\n]+\\]" lines "${listing}")
set(tags "")
set(grouped 0)
foreach(line IN LISTS lines)
    string(REGEX REPLACE "^([0-9]+)  (.*)$" "\\1" count "${line}")
    string(REGEX REPLACE "^([0-9]+)  (.*)$" "\\2" tag "${line}")
    list(APPEND tags "${tag}")
    math(EXPR grouped "${grouped} + ${count}")
endforeach()
if(NOT tags)
    message(FATAL_ERROR "${EXE} -# --list-tags ${SPEC} listed no file: ${listing}")
endif()
# Every case SPEC matches is in one of the groups, or the registration is wrong.
include(${CMAKE_CURRENT_LIST_DIR}/catch_options.cmake)
execute_process(COMMAND "${EXE}" ${catch_list_names} "${SPEC}" OUTPUT_VARIABLE names)
string(REGEX MATCHALL "[^\n]+" names "${names}")
list(LENGTH names matching)
if(NOT grouped EQUAL matching)
    message(FATAL_ERROR "${EXE}: ${matching} cases match ${SPEC}, but its file groups hold "
                        "${grouped}: ${listing}")
endif()
# -w: a group whose spec matches no test case fails.
set(script "")
foreach(tag IN LISTS tags)
    string(REGEX REPLACE "^\\[#(.*)\\]$" "\\1" file "${tag}")
    set(name "${PREFIX}: ${file}.cpp")
    string(APPEND script
        "add_test([==[${name}]==] [==[${EXE}]==] [==[-#]==] -w ${catch_unmatched_warning}"
        " [==[${tag}${SPEC}~[.]]==])\n"
        "set_tests_properties([==[${name}]==] PROPERTIES LABELS [==[${LABEL}]==]"
        " ENVIRONMENT [==[${ENVIRONMENT}]==] TIMEOUT ${TIMEOUT}"
        " FAIL_REGULAR_EXPRESSION [==[CONCLAVE-SKIPPED:]==])\n")
endforeach()
file(WRITE "${OUT}" "${script}")
