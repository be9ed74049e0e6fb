// SPDX-License-Identifier: BSL-1.0
// An observer of a client's blocking reads, to know when a waiter's query is parked at
// Consul (and when one was answered) without sleeping.
#pragma once

#include <conclave/observer.hpp>

#include <cstddef>
#include <string_view>

namespace conclave::test {

/// Blocking KV reads (kv_get, kv_list) of the clients that share it: in flight now, and
/// answered so far (a 200, or a 404 for a missing key).
struct blocking_reads : observer {
    std::size_t in_flight = 0;
    std::size_t answered = 0;

    static bool kv_read(std::string_view endpoint) {
        return endpoint == "kv_get" || endpoint == "kv_list";
    }
    void request_started(std::string_view endpoint, bool blocking) override {
        if (blocking && kv_read(endpoint))
            ++in_flight;
    }
    void request_finished(const request_event& e) override {
        if (!e.blocking || !kv_read(e.endpoint))
            return;
        --in_flight;
        if (e.status == 200 || e.status == 404)
            ++answered;
    }
};

} // namespace conclave::test
