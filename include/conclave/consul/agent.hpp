// SPDX-License-Identifier: BSL-1.0
// What the agent says about itself (/v1/agent/self).
#pragma once

#include <string>

namespace conclave {

/// Part of /v1/agent/self.
struct agent_info {
    std::string node_name;
    std::string datacenter;
    std::string version;
};

} // namespace conclave
