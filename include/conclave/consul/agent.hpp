// SPDX-License-Identifier: BSL-1.0
/// \file
/// What the agent says about itself (/v1/agent/self).
#pragma once

#include <string>

namespace conclave {

/// Part of /v1/agent/self.
struct agent_info {
    std::string node_name;  ///< the agent's node
    std::string datacenter; ///< its datacenter
    std::string version;    ///< its Consul version
};

} // namespace conclave
