#include "commands.hpp"

#include <cstdio>

namespace conclave::cli {

int agent_command(args) {
    std::fputs("conclave agent: not implemented yet\n", stderr);
    return 1;
}

} // namespace conclave::cli
