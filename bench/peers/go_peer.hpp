// SPDX-License-Identifier: BSL-1.0
// Go's own api.Lock and api.Semaphore beside ours: `golock` (github.com/hashicorp/consul/api
// driven by a small Go program) runs the same scenario, with the same sizes, on the same
// agent right after conclave's run, and its record carries the ratios against ours.
#pragma once

#include "harness/harness.hpp"

#include <string>

namespace conclave::bench {

/// The golock executable: --go, else $GOLOCK, else the peer our own machines keep beside
/// the source tree (../shared/peers/go-api). Empty when there is none, or with --go none.
const std::string& go_peer_executable(const options& o);

/// Runs golock's `scenario` (rtt, cycle, contend, drain or semaphore) with n contenders and
/// adds its record (impl "go-api"), with ratios against conclave's last record of the same
/// scenario and N. Does nothing when there is no Go peer.
void run_go_beside(harness& h, const std::string& scenario, std::size_t n);

/// Sets on a peer's record the ratios against ours (each above 1 favours conclave):
/// ours_ops_ratio, ours_cpu_advantage, ours_p99_advantage, ours_requests_advantage.
void set_peer_ratios(record& peer, const record& ours);

} // namespace conclave::bench
