// SPDX-License-Identifier: BSL-1.0
#include "cli/elect/flags.hpp"

namespace conclave::cli {

void elect_flags::add_to(flag_set& flags) {
    flags.add_string("name", &cfg.value);
    flags.add_bool("once", &cfg.once);
    flags.add_int("max-restarts", &cfg.max_restarts);
    flags.add_bool("leader", &leader_only);
    held.add_to(flags, cfg);
}

} // namespace conclave::cli
