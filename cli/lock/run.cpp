// SPDX-License-Identifier: BSL-1.0
#include "cli/common/child_control.hpp"
#include "cli/common/child_run.hpp"
#include "cli/common/failure.hpp"
#include "cli/common/session_file.hpp"
#include "cli/common/session_ttl.hpp"
#include "cli/common/startup_check.hpp"
#include "cli/exit_codes.hpp"
#include "cli/lock/holder.hpp"
#include "cli/lock/run.hpp"
#include "cli/lock/session_keeper.hpp"
#include "codec/go/duration.hpp"
#include "process/exit_wait.hpp"
#include "process/wait_status.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <cstdio>
#include <sys/wait.h>
#include <system_error>

namespace conclave::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using namespace std::chrono_literals;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// Every race below is "whichever happens first", so each arm returns a value (never
// throws): `||` then completes with the first arm to finish and cancels the others.
asio::awaitable<bool> expires(asio::steady_timer& t) {
    auto [ec] = co_await t.async_wait(tuple_awaitable);
    co_return !ec;
}

programs::spawn_options make_child_options(const lock_settings& cfg, const lock_holder& holder,
                                           const session& s) {
    return child_options(cfg.command, cfg.shell, cfg.pass_stdin,
                         {"CONSUL_LOCK_HELD=true",
                          "CONCLAVE_LOCK_TOKEN=" + holder.token().to_string(),
                          "CONCLAVE_SESSION_TTL=" + ttl_seconds(s.ttl())});
}

health_source health_of(lock_holder& holder) {
    return {[&holder](hold_health seen) { return holder.wait_health_change(seen); },
            [&holder] { return holder.remaining(); }};
}

// Release, delete the key(s) if nobody else uses them, destroy the session: on every path
// after the session was created. Never interrupted by signals (they stay queued).
// (No delete after an acquire Consul's ACLs denied: the token may not write the key.)
asio::awaitable<bool> clean_up(lock_holder& holder, session_keeper& keeper,
                               std::chrono::milliseconds ttl, bool acquired, bool verbose,
                               bool denied = false) {
    bool ok = true;
    if (acquired) {
        if (auto ec = co_await holder.release(); ec) {
            say("Lock release failed: " + ec.message());
            ok = false;
        }
    }
    if (denied) {
    } else if (auto ec = co_await holder.destroy(); !ec) {
        if (verbose)
            say("Cleanup succeeded");
    } else if (ec == errc::conflict || ec == errc::limit_conflict) {
        // Someone else's: held, or a semaphore with another limit.
        if (verbose)
            say("Cleanup aborted, lock in use");
    } else {
        say("Lock cleanup failed: " + ec.message());
        ok = false;
    }
    if (auto ec = co_await keeper.stop(); ec) {
        say("Session cleanup failed: " + ec.message() + " (Consul drops it when its TTL of " +
            codec::go::format_duration(ttl) + " runs out)");
        ok = false;
    }
    if (ok && acquired && verbose)
        say("Lock released");
    co_return ok;
}

// SIGUSR2 with -session-file: the session is left to the next conclave started with the file
// (nothing released, nothing destroyed), and this one exits 0.
asio::awaitable<int> hand_over(session_keeper& keeper, const lock_settings& cfg,
                               const char* what_goes_on) {
    const std::string id = keeper.get().id();
    if (!keeper.get().hand_over()) {
        say("Session " + id + " was lost before it could be handed over");
        co_await keeper.stop();
        remove_session_file(cfg.session_file);
        co_return exit_code::lock_lost;
    }
    co_await keeper.stop(); // (no destroy: only the renewals end)
    say("Session " + id + " handed over: " + what_goes_on +
        " for the conclave started with -session-file '" + cfg.session_file + "'");
    co_return exit_code::ok;
}

} // namespace

asio::awaitable<int> run_lock(const lock_settings& cfg, client& consul, asio::signal_set& signals) {
    auto ex = co_await asio::this_coro::executor;

    if (auto stop = co_await check_agent(consul, signals, "lock acquisition"))
        co_return *stop;

    // Not raced with signals: a create cancelled after it reached Consul would leave a
    // session nobody destroys. It is bounded by the client's request timeout.
    // `consul lock`'s session (TTL and lock-delay 15 s by default), bound to the node's
    // serfHealth; a semaphore's or a read-write lock's session deletes its contender key
    // when it dies.
    // With -session-file, the session a predecessor handed over, if Consul still knows it.
    const bool plain_lock = cfg.mode == lock_mode::plain && cfg.limit == 1;
    const auto scfg = held_session_config(cfg, plain_lock ? session_behavior::release
                                                          : session_behavior::delete_keys);
    auto [create_failed, created] = co_await session::async_create(consul, scfg, with_text);
    if (const auto f = failure_of(create_failed)) {
        say("Lock acquisition failed: failed to create session: " + f.text);
        co_return exit_code::error;
    }
    if (cfg.verbose && created.resumed())
        say("Resumed session " + created.id() + " from '" + cfg.session_file + "'");
    else if (cfg.verbose && !scfg.resume_id.empty())
        say("Session " + scfg.resume_id + " in '" + cfg.session_file +
            "' is no longer known to Consul: created a new one");
    session_keeper keeper{std::move(created)};
    auto holder = make_lock_holder(consul, cfg.prefix, cfg.mode, cfg.limit, cfg.monitor_retries,
                                   cfg.session_name);
    // Every end but a hand-over ends the session: nothing is left to resume.
    auto finish = [&](bool acquired, bool denied) -> asio::awaitable<bool> {
        const bool cleaned =
            co_await clean_up(*holder, keeper, cfg.ttl, acquired, cfg.verbose, denied);
        remove_session_file(cfg.session_file);
        co_return cleaned;
    };
    if (const auto problem = write_session_file(cfg.session_file, keeper.get().id());
        !problem.empty()) {
        say(problem);
        co_await finish(false, false);
        co_return exit_code::error;
    }

    // Acquire, until the -timeout or a signal.
    if (cfg.verbose)
        say("Attempting lock acquisition");
    asio::steady_timer deadline(ex, asio::steady_timer::time_point::max());
    if (cfg.timeout.count() > 0)
        deadline.expires_after(cfg.timeout);
    auto got =
        co_await (holder->acquire(keeper.get()) || expires(deadline) || next_signal(signals));
    int failed = 0;
    bool denied = false;
    if (got.index() == 1) {
        say("Timeout during lock acquisition: '" + holder->key() + "' was not free within " +
            codec::go::format_duration(cfg.timeout));
        failed = exit_code::timed_out;
    } else if (got.index() == 2 && std::get<2>(got) == hand_over_signal) {
        co_return co_await hand_over(keeper, cfg, "the acquisition goes on");
    } else if (got.index() == 2) {
        say("Shutdown triggered during lock acquisition");
        failed = exit_code::interrupted_base + std::get<2>(got);
    } else if (const auto ec = std::get<0>(got); ec) {
        say("Lock acquisition failed: " + holder->describe(ec));
        failed = exit_code::error;
        denied = ec == errc::permission_denied;
    }
    if (failed != 0) {
        const bool cleaned = co_await finish(false, denied);
        co_return cleaned ? failed : exit_code::error;
    }

    // Held: run the child until it exits, the lock is lost, or a signal arrives.
    if (cfg.verbose)
        say("Lock acquired (" + holder->token().to_string() + "), starting child");
    int code = exit_code::ok;
    std::unique_ptr<programs::child_process> child;
    const auto options = make_child_options(cfg, *holder, keeper.get());
    try {
        child = std::make_unique<programs::child_process>(options);
    } catch (const std::system_error& e) {
        say("Error starting child '" + options.argv.front() + "': " + e.code().message() +
            " (check the command and PATH)");
        code = exit_code::error;
    }
    if (child) {
        // The relay never completes by itself: it only reports jeopardy while the others
        // wait.
        auto r = co_await (programs::async_wait_exit(*child) || holder->wait_lost() ||
                           next_signal(signals) ||
                           relay_health(health_of(*holder), child->pid(), cfg.signals, "Lock"));
        int status = 0;
        if (r.index() == 0) {
            // What the command started (`sh -c 'worker & exit 1'`) must not run on once the
            // lock is released. The exited command is not reaped yet, so its process group
            // id still names its group.
            child->signal(SIGKILL);
            status = child->reap();
            if (!holder->held()) {
                // It ended before the loss was noticed, but not entirely under the lock.
                say("Lock lost while the child ran");
                code = exit_code::lock_lost;
            } else if (cfg.verbose) {
                say("Child terminated (" + programs::describe_wait_status(status) +
                    "), releasing lock");
            }
        } else if (r.index() == 1) {
            say("Lock lost (" + describe_loss(std::get<1>(r)) + "), killing child");
            status = co_await stop_child(*child, SIGTERM, &signals);
            code = exit_code::lock_lost;
        } else if (r.index() == 2 && std::get<2>(r) == hand_over_signal) {
            if (cfg.verbose)
                say("Handing over, killing child");
            co_await stop_child(*child, SIGTERM, &signals);
            co_return co_await hand_over(keeper, cfg, "the lock stays held");
        } else if (r.index() == 2) {
            const int sig = std::get<2>(r);
            if (cfg.verbose)
                say("Shutdown triggered, killing child");
            status = co_await stop_child(*child, sig, &signals);
            code = exit_code::interrupted_base + sig;
        }
        const bool child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (code == exit_code::ok && !child_ok && cfg.child_exit_code)
            code = exit_code::child_failed;
    }

    const bool cleaned = co_await finish(true, false);
    // A loss outranks a failed cleanup (which clean_up reported): a supervisor waiting for
    // exit 3 must learn that the command was cut short, and a cleanup after a loss often
    // fails for the loss's reason (Consul unreachable).
    if (code == exit_code::lock_lost)
        co_return code;
    co_return cleaned ? code : exit_code::error;
}

} // namespace conclave::cli
