# SPDX-License-Identifier: BSL-1.0
# Run by CMake after a test executable is built (test/CMakeLists.txt, conclave_test_groups):
# writes OUT, the CTest registrations of one test per source file of EXE that has test cases
# matching SPEC. Each such test runs that file's matching cases in one process, which
# starts one real Consul and cleans it between them (support/consul_server.hpp).
#   EXE, SPEC (a Catch test spec, e.g. "~[dev-agent-only]"), PREFIX (of the test names),
#   LABEL, ENVIRONMENT, TIMEOUT, OUT, CATCH2_MAJOR (2 or 3: the Catch2 EXE is built with)
# Catch's -# (--filenames-as-tags) tags each case [#<file name without extension>].
# (Catch takes its options before the test spec.)
execute_process(COMMAND "${EXE}" "-#" --list-tags "${SPEC}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE status)
# (Catch2 v2 exits with the number of tags it listed, v3 with 0: the status says nothing here.
# Both print each tag as [#name].)
string(REGEX MATCHALL "\\[#[A-Za-z0-9_.-]+\\]" tags "${listing}")
list(REMOVE_DUPLICATES tags)
if(NOT tags)
    message(FATAL_ERROR "${EXE} -# --list-tags ${SPEC} listed no file: ${listing}")
endif()
# A group whose spec matches no test case fails: v2 needs -w NoTests, v3 refuses that option
# and names its warning UnmatchedTestSpec.
if(CATCH2_MAJOR EQUAL 2)
    set(unmatched_fails NoTests)
else()
    set(unmatched_fails UnmatchedTestSpec)
endif()
set(script "")
foreach(tag IN LISTS tags)
    string(REGEX REPLACE "^\\[#(.*)\\]$" "\\1" file "${tag}")
    set(name "${PREFIX}: ${file}.cpp")
    string(APPEND script
        "add_test([==[${name}]==] [==[${EXE}]==] [==[-#]==] -w ${unmatched_fails}"
        " [==[${tag}${SPEC}]==])\n"
        "set_tests_properties([==[${name}]==] PROPERTIES LABELS [==[${LABEL}]==]"
        " ENVIRONMENT [==[${ENVIRONMENT}]==] TIMEOUT ${TIMEOUT})\n")
endforeach()
file(WRITE "${OUT}" "${script}")
