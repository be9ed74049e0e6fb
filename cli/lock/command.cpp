// SPDX-License-Identifier: BSL-1.0
// `conclave lock [options] <prefix> <command...>`: the arguments, checked in the order and
// with the messages of `consul lock`, then lock_run.
#include "cli/commands.hpp"
#include "cli/common/flags.hpp"
#include "cli/common/http_flags.hpp"
#include "cli/common/key_path.hpp"
#include "cli/common/session_file.hpp"
#include "cli/exit_codes.hpp"
#include "cli/lock/flags.hpp"
#include "cli/lock/mode.hpp"
#include "cli/lock/run.hpp"
#include "cli/run.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/system/system_error.hpp>

#include <csignal>
#include <cstdio>
#include <limits>

namespace conclave::cli {

namespace {

constexpr const char* lock_usage_head = R"(Usage: conclave lock [options] <prefix> <command...>

  Acquires a lock at <prefix>/.lock (or, with -n > 1, a slot of the semaphore at
  <prefix>), runs the command while it is held, then releases it and deletes what it
  created. Compatible with `consul lock` and Consul's Go api.Lock / api.Semaphore.
  With -shared or -exclusive, holds a read or the write grant of the read-write lock
  at <prefix> (conclave::read_write_lock: keys under <prefix>/.rwlock) instead.

  The command's environment has CONSUL_LOCK_HELD=true, CONCLAVE_LOCK_TOKEN, the
  fencing token of this grant ("<modify index>:<lock index>:<session>:<key>"; later
  grants have larger modify indexes), and CONCLAVE_SESSION_TTL, the session's TTL in
  seconds.

  If the lock is lost, the command's process group gets SIGTERM, then SIGKILL after 5s,
  and conclave exits 3. SIGINT/SIGTERM sent to conclave are forwarded the same way; it
  then releases the lock and exits 128+signal. No session or key is left behind.

Exit status: 0 done (the command's own status is ignored unless -child-exit-code),
1 bad arguments or a failure to reach Consul, acquire or clean up, 2 the command
failed (with -child-exit-code), 3 the lock was lost, 5 the lock was not free within
-timeout (someone else holds it; `consul lock` exits 1), 130/143 interrupted.

Options:

  -n=<int>                 Holders allowed at once. 1 (default) is a lock, more a
                           semaphore; every contender must use the same number.
  -shared                  Hold a read grant of the read-write lock at <prefix>: any
                           number of -shared holders at once, none beside -exclusive.
  -exclusive               Hold its write grant: alone, no -shared or other -exclusive
                           holder beside it. Served in arrival order, readers together.
  -timeout=<duration>      Longest wait to acquire ("10s", "1m"), then exit 5. 0
                           (default) waits forever. -try is a deprecated alias.
  -monitor-retry=<int>     Failed reads (Consul 500s) tolerated, 1s apart, while watching
                           a held lock before it counts as lost. Default 3; 0 disables.
  -name=<string>           Session name. Default "Consul lock for '<command>' at '<prefix>'".
  -ttl=<duration>          Session TTL, 10s to 24h (default 15s): how long Consul keeps
                           the lock after conclave stops renewing it (killed, host down).
  -lock-delay=<duration>   Lock-delay of the session (default 15s): after the session is
                           lost (not released), nobody gets the lock for this long, while
                           the command is being stopped. Consul applies at most 60s; 0
                           disables it. Not with -shared/-exclusive, whose every acquire
                           writes a key of its own: fence the command's writes instead.
  -child-exit-code         Exit 2 when the command exits non-zero or dies of a signal.
)";

} // namespace

int lock_command(args a) {
    lock_flags given;
    flag_set flags;
    given.add_to(flags);
    const auto& limit = given.limit;
    const auto& monitor_retry = given.monitor_retry;
    const auto& timeout = given.timeout;
    auto& cfg = given.cfg;
    auto& held = given.held;

    std::vector<std::string_view> rest;
    if (auto stop = held.parse(flags, a, lock_usage_head, "lock", rest))
        return *stop;
    // The checks and texts of `consul lock`, in its order.
    if (limit <= 0) {
        std::fputs("Lock holder limit must be positive\n", stderr);
        return exit_code::error;
    }
    if (rest.size() < 2) {
        std::fputs("Key prefix and child command must be specified\n", stderr);
        return exit_code::error;
    }
    if (timeout.count() < 0) {
        std::fputs("Timeout must be positive\n", stderr);
        return exit_code::error;
    }
    if (monitor_retry < 0) {
        std::fputs("Number for 'monitor-retry' must be >= 0\n", stderr);
        return exit_code::error;
    }
    if (limit > std::numeric_limits<std::uint32_t>::max() ||
        monitor_retry > std::numeric_limits<unsigned>::max()) {
        std::fputs("-n and -monitor-retry must be below 4294967296\n", stderr);
        return exit_code::error;
    }
    const auto mode = choose_lock_mode(given.shared, given.exclusive, limit);
    if (!mode.error.empty()) {
        std::fputs(mode.error.c_str(), stderr);
        return exit_code::error;
    }
    if (refused(check_session_ttl(held.ttl)) || refused(check_lock_delay(held.lock_delay)) ||
        refused(held.check_health_ttl()))
        return exit_code::error;
    std::string_view prefix = rest[0];
    while (!prefix.empty() && prefix.front() == '/')
        prefix.remove_prefix(1);
    cfg.prefix = clean_key_path(prefix);
    if (cfg.prefix.empty()) {
        std::fprintf(stderr,
                     "Key prefix '%s' names no key: give a path such as service/web/leader\n",
                     std::string(rest[0]).c_str());
        return exit_code::error;
    }
    cfg.command.assign(rest.begin() + 1, rest.end());
    cfg.limit = static_cast<unsigned>(limit);
    cfg.mode = mode.mode;
    cfg.timeout = timeout;
    cfg.monitor_retries = static_cast<unsigned>(monitor_retry);
    held.store(cfg);
    if (cfg.session_name.empty())
        cfg.session_name = session_name_for("Consul lock", cfg.command, prefix);

    boost::asio::io_context ioc;
    // Installed first, so that SIGINT/SIGTERM never take their default action (which
    // would leave the session and the child behind) once this command has started.
    boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
    if (!cfg.session_file.empty())
        signals.add(hand_over_signal);
    std::optional<client> consul;
    if (!held.http.open_client(flags, ioc, consul))
        return exit_code::error;
    return run_command(ioc, run_lock(cfg, *consul, signals), "lock");
}

} // namespace conclave::cli
