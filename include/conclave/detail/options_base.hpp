// SPDX-License-Identifier: BSL-1.0
/// \file
/// The base of conclave's option types, for their with_* calls.
#pragma once

#include <utility>

namespace conclave::detail {

/// `Options` is the option type built on it. set(field, v) assigns one field and returns
/// the options object, so that each with_* call is one line and calls chain.
template <class Options>
class options_base {
protected:
    template <class Field, class Value>
    Options& set(Field& field, Value&& v) {
        field = std::forward<Value>(v);
        return static_cast<Options&>(*this);
    }
};

} // namespace conclave::detail
