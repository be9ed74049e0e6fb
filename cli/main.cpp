// conclave: the command-line tool (agent -dev, and the tools around the recipes).
#include "commands.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr const char* usage = R"(Usage: conclave <command> [options]

Commands:
    agent      Runs the embedded dev agent (conclave agent -dev)

Run 'conclave <command> -help' for a command's options.
)";

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> all(argv + 1, argv + argc);
    if (all.empty() || all[0] == "-h" || all[0] == "-help" || all[0] == "--help") {
        std::fputs(usage, all.empty() ? stderr : stdout);
        return all.empty() ? 1 : 0;
    }
    const std::string_view cmd = all[0];
    conclave::cli::args rest{all.data() + 1, all.size() - 1};
    if (cmd == "agent")
        return conclave::cli::agent_command(rest);
    std::fprintf(stderr, "conclave: unknown command '%s'\n\n%s", std::string(cmd).c_str(), usage);
    return 1;
}
