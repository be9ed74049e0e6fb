// SPDX-License-Identifier: BSL-1.0
/// \file
/// The options shared by the recipes that write one key by check-and-set and wait on it:
/// counters, barriers, latches.
#pragma once

#include <conclave/detail/options_base.hpp>
#include <conclave/error.hpp>

#include <chrono>

namespace conclave::detail {

/// `Options` is the option type built on it (counter_options, barrier_options).
template <class Options>
struct keyed_options : options_base<Options> {
    /// Bounds each write, its requests and its retries after check-and-set races lost to
    /// other writers (each retry reads afresh after a random pause). 0: the client's
    /// request_timeout.
    std::chrono::milliseconds budget{0};
    /// Longest blocking query of the read that the waits share (Consul adds up to 1/16 of
    /// jitter). That read is the client's for the key (or prefix): the first object of a
    /// client on it sets its wait and retry_wait, for every later one too.
    std::chrono::milliseconds wait{60000};
    /// Pause between tries of that read after it failed.
    std::chrono::milliseconds retry_wait{1000};
    /// Filled with what a failed operation says (Consul's text, and conclave's: the key and
    /// what it holds for errc::conflict, whether a write may have been applied) when not
    /// null, for tokens other than with_diagnostics, which carries it in the conclave::error
    /// it throws. Shared by every operation of the object.
    diagnostics* diag = nullptr;

    Options& with_budget(std::chrono::milliseconds v) { return this->set(budget, v); }
    Options& with_wait(std::chrono::milliseconds v) { return this->set(wait, v); }
    Options& with_retry_wait(std::chrono::milliseconds v) { return this->set(retry_wait, v); }
    Options& with_diag(diagnostics* v) { return this->set(diag, v); }
};

} // namespace conclave::detail
