// SPDX-License-Identifier: BSL-1.0
// The translation unit that builds support/program_pch.hpp's precompiled header (support/
// CMakeLists.txt): the programs reuse it; it defines nothing.
