// SPDX-License-Identifier: BSL-1.0
// PNG charts of a run with gnuplot: latency CDF per N, throughput vs N, handoff latency vs N
// with the peers side by side.
#pragma once

#include "harness/report.hpp"

#include <string>
#include <vector>

namespace conclave::bench {

/// Writes DIR/*.png (and the data and scripts next to them). False when gnuplot failed or
/// is missing (a message says so).
bool write_plots(const std::string& dir, const std::vector<record>& records);

} // namespace conclave::bench
