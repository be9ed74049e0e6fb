# SPDX-License-Identifier: BSL-1.0
# The API reference: `cmake --build <build> --target docs` runs doxygen on the public headers
# (docs/Doxyfile.in) and writes <build>/docs/html/index.html. Any doxygen warning fails it.
# Included when conclave is the top-level project only.

find_package(Doxygen 1.9.4)

if(NOT DOXYGEN_FOUND)
    message(STATUS "conclave: doxygen not found: the docs target (API reference) only says so "
                   "(Debian: apt-get install doxygen, then configure again)")
    add_custom_target(docs
        COMMAND ${CMAKE_COMMAND} -E echo
                "conclave: the docs target needs doxygen 1.9.4 or later: install it"
                "(Debian: apt-get install doxygen) and configure this build again"
        COMMAND ${CMAKE_COMMAND} -E false
        VERBATIM)
    return()
endif()

set(CONCLAVE_DOCS_OUTPUT ${PROJECT_BINARY_DIR}/docs)

# The main page, docs/api-mainpage.md, links to the guides relative to docs/, as the
# repository shows it. In the HTML those links would point into <build>/docs/html, so the
# copy doxygen reads links to the files of this source tree instead.
set(mainpage_source ${PROJECT_SOURCE_DIR}/docs/api-mainpage.md)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${mainpage_source})
file(READ ${mainpage_source} mainpage)
string(REGEX REPLACE "\\]\\(([^):]+\\.md(#[^)]*)?)\\)" "](file://${PROJECT_SOURCE_DIR}/docs/\\1)"
       mainpage "${mainpage}")
set(CONCLAVE_DOCS_MAINPAGE ${CONCLAVE_DOCS_OUTPUT}/api-mainpage.md)
file(CONFIGURE OUTPUT ${CONCLAVE_DOCS_MAINPAGE} CONTENT "${mainpage}" @ONLY)

set(CONCLAVE_DOXYFILE ${CONCLAVE_DOCS_OUTPUT}/Doxyfile)
configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${CONCLAVE_DOXYFILE} @ONLY)

add_custom_target(docs
    COMMAND Doxygen::doxygen ${CONCLAVE_DOXYFILE}
    WORKING_DIRECTORY ${CONCLAVE_DOCS_OUTPUT}
    COMMENT "conclave: API reference in ${CONCLAVE_DOCS_OUTPUT}/html/index.html"
    VERBATIM)
