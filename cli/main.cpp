// SPDX-License-Identifier: BSL-1.0
// conclave: the command-line tool (agent -dev, and the tools around the recipes).
#include "cli/commands.hpp"

#include <conclave/version.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

struct command {
    std::string_view name;
    int (*run)(conclave::cli::args);
    const char* summary;
};

// One row per subcommand: the usage below is generated from this table.
constexpr command commands[] = {
    {"agent", conclave::cli::agent_command, "Runs the embedded dev agent (conclave agent -dev)"},
    {"barrier", conclave::cli::barrier_command,
     "Waits at a barrier, or runs a command between N participants' enter and leave"},
    {"counter", conclave::cli::counter_command,
     "Reads, adds to or sets a counter (a number in a key)"},
    {"elect", conclave::cli::elect_command, "Runs a command while leading an election"},
    {"group", conclave::cli::group_command,
     "Runs a command while a group member; lists or watches the members"},
    {"kv", conclave::cli::kv_command, "Reads, writes, deletes, exports and imports KV entries"},
    {"latch", conclave::cli::latch_command, "Sets, counts down or waits for a countdown latch"},
    {"lock", conclave::cli::lock_command, "Runs a command while holding a lock or semaphore"},
    {"watch", conclave::cli::watch_command,
     "Prints each change of a key or prefix, or runs a handler"},
};

void print_usage(std::FILE* out) {
    std::fputs("Usage: conclave <command> [options]\n\nCommands:\n", out);
    for (const auto& c : commands)
        std::fprintf(out, "    %-10s %s\n", std::string(c.name).c_str(), c.summary);
    std::fputs("\nRun 'conclave <command> -help' for a command's options,\n"
               "'conclave version' for the version.\n",
               out);
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> all(argv + 1, argv + argc);
    if (all.empty() || all[0] == "-h" || all[0] == "-help" || all[0] == "--help") {
        print_usage(all.empty() ? stderr : stdout);
        return all.empty() ? 1 : 0;
    }
    const std::string_view cmd = all[0];
    if (cmd == "version" || cmd == "-version" || cmd == "--version") {
        std::printf("conclave v%s\n", CONCLAVE_VERSION_STRING);
        return 0;
    }
    conclave::cli::args rest{all.data() + 1, all.size() - 1};
    for (const auto& c : commands)
        if (c.name == cmd)
            return c.run(rest);
    std::fprintf(stderr, "conclave: unknown command '%s'\n\n", std::string(cmd).c_str());
    print_usage(stderr);
    return 1;
}
