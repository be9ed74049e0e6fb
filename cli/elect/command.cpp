// SPDX-License-Identifier: BSL-1.0
// `conclave elect [options] <key> -- <command...>`: runs the command while this process
// leads the election at <key> (conclave::elector), campaigning again after each term.
// `conclave elect -leader <key>` prints who leads.
#include "cli/commands.hpp"
#include "cli/common/flags.hpp"
#include "cli/common/http_flags.hpp"
#include "cli/common/key_path.hpp"
#include "cli/common/session_file.hpp"
#include "cli/elect/flags.hpp"
#include "cli/elect/run.hpp"
#include "cli/exit_codes.hpp"
#include "cli/run.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <cstdio>
#include <optional>
#include <unistd.h>

namespace conclave::cli {

namespace {

constexpr const char* elect_usage_head = R"(Usage: conclave elect [options] <key> -- <command...>
       conclave elect -leader [options] <key>

  Campaigns for leadership at <key> and runs the command while this process leads. When
  leadership is lost, the command's process group gets SIGTERM (SIGKILL after 5s) and
  conclave campaigns again. When the command exits by itself, the term ends too: the key
  is released and conclave campaigns again, running the command anew when elected (at
  most one start per second). After a failure (non-zero exit, killed by a signal) it
  stays out of the race for 1s, doubled by each further failure in a row up to 60s, so
  that another candidate can lead; -max-restarts bounds the failures in a row. With -once
  it exits after the first term instead.

  The key holds -name while this process leads; `conclave elect -leader <key>` prints it
  (exit 0), or "no leader" on stderr (exit 1). The layout is Consul's api.Lock on <key>.

  The command's environment has CONCLAVE_LEADER=true, CONSUL_LOCK_HELD=true,
  CONCLAVE_LOCK_TOKEN, the fencing token of the term ("<modify index>:<lock index>:
  <session>:<key>"; later terms have larger modify indexes), and CONCLAVE_SESSION_TTL,
  the session's TTL in seconds.

  SIGINT/SIGTERM sent to conclave go to the command's process group; conclave waits for
  it (SIGKILL after 5s), releases the key, destroys its session and exits 128+signal. No
  session or key is left behind.

Exit status: 128+signal when interrupted (130, 143); 1 bad arguments, Consul unreachable,
the key used by another recipe, the command not startable, or a failed cleanup; 4 the
command failed more often in a row than -max-restarts allows. With -once: the command's
status (128+N if killed by signal N), or 3 if leadership was lost during the term (also
when the cleanup then failed).

Options:

  -name=<string>           Value published in the key while leading.
                           Default "<hostname>:<pid>".
  -once                    Exit after the first term, with the command's status.
  -max-restarts=<int>      After the command failed this many times in a row and once
                           more, give up: exit 4. Default -1: no limit. A success, or a
                           run of 60s or more, starts the count again.
  -ttl=<duration>          Session TTL, 10s to 24h (default 15s): how long Consul keeps
                           the leadership after conclave stops renewing it.
  -lock-delay=<duration>   Lock-delay of the session (default 15s): after a leader's
                           session is lost, nobody is elected for this long, while the
                           deposed leader stops its command. Keep it above 5s. Consul
                           applies at most 60s; 0 disables it.
  -leader                  Print the current leader's value instead (no command).
)";

std::string default_value() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
        return "localhost:" + std::to_string(::getpid());
    return std::string(host) + ":" + std::to_string(::getpid());
}

} // namespace

int elect_command(args a) {
    elect_flags given;
    flag_set flags;
    given.add_to(flags);
    auto& cfg = given.cfg;
    auto& held = given.held;
    const bool& leader_only = given.leader_only;

    std::vector<std::string_view> rest;
    if (auto stop = held.parse(flags, a, elect_usage_head, "leadership", rest))
        return *stop;
    if (rest.empty()) {
        std::fputs(leader_only ? "Key must be specified\n"
                               : "Key and child command must be specified\n",
                   stderr);
        return exit_code::error;
    }
    const std::string_view given_key = rest[0];
    rest.erase(rest.begin());
    if (!rest.empty() && rest.front() == "--")
        rest.erase(rest.begin());
    if (leader_only && !rest.empty()) {
        std::fputs("-leader takes a key and no command\n", stderr);
        return exit_code::error;
    }
    if (!leader_only && rest.empty()) {
        std::fputs("Key and child command must be specified\n", stderr);
        return exit_code::error;
    }
    if (refused(check_lock_delay(held.lock_delay)) || refused(check_session_ttl(held.ttl)) ||
        refused(held.check_health_ttl()))
        return exit_code::error;
    cfg.key = clean_key_path(given_key);
    if (cfg.key.empty()) {
        std::fprintf(stderr, "Key '%s' names no key: give a path such as service/web/leader\n",
                     std::string(given_key).c_str());
        return exit_code::error;
    }
    cfg.command.assign(rest.begin(), rest.end());
    held.store(cfg);
    if (!flags.was_set("name"))
        cfg.value = default_value();
    cfg.session_name = session_name_for("conclave elect", cfg.command, cfg.key);

    boost::asio::io_context ioc;
    // Installed first, so that SIGINT/SIGTERM never take their default action (which
    // would leave the session and the child behind) once this command has started.
    std::optional<boost::asio::signal_set> signals;
    if (!leader_only)
        signals.emplace(ioc, SIGINT, SIGTERM);
    if (!leader_only && !cfg.session_file.empty())
        signals->add(hand_over_signal);
    std::optional<client> consul;
    if (!held.http.open_client(flags, ioc, consul))
        return exit_code::error;
    if (leader_only)
        return run_command(ioc, print_leader(cfg.key, *consul), "elect");
    return run_command(ioc, run_elect(cfg, *consul, *signals), "elect");
}

} // namespace conclave::cli
