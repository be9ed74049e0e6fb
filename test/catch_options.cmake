# SPDX-License-Identifier: BSL-1.0
# The command-line options that differ between Catch2 v2 and v3, in one place, for
# test/CMakeLists.txt and the scripts it runs (check_test_names.cmake, add_file_groups.cmake).
#   CATCH2_MAJOR (2 or 3) in; catch_list_names and catch_unmatched_warning out:
#   - catch_list_names: the names of the test cases alone, one a line (v3 removed
#     --list-test-names-only; its quiet listing prints the same);
#   - catch_unmatched_warning: what `-w` takes to make a test spec that matches no test case
#     fail instead of pass (v3 refuses NoTests and names it UnmatchedTestSpec).
if(CATCH2_MAJOR EQUAL 2)
    set(catch_list_names --list-test-names-only)
    set(catch_unmatched_warning NoTests)
else()
    set(catch_list_names --list-tests --verbosity quiet)
    set(catch_unmatched_warning UnmatchedTestSpec)
endif()
