// SPDX-License-Identifier: BSL-1.0
// The translation unit that builds programs/pch.hpp's precompiled header (programs/
// CMakeLists.txt): the programs reuse it; it defines nothing.
