// SPDX-License-Identifier: BSL-1.0
#include "cli/common/child_control.hpp"
#include "cli/common/failure.hpp"
#include "cli/common/session_file.hpp"
#include "cli/common/session_ttl.hpp"
#include "cli/common/startup_check.hpp"
#include "cli/elect/restart_policy.hpp"
#include "cli/elect/run.hpp"
#include "cli/exit_codes.hpp"
#include "codec/go/duration.hpp"
#include "process/exit_wait.hpp"
#include "process/wait_status.hpp"

#include <conclave/elector.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <cstdio>
#include <memory>
#include <system_error>

namespace conclave::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using clock = std::chrono::steady_clock;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

void say(const std::string& text) {
    std::fprintf(stderr, "%s\n", text.c_str());
}

enum class stop_reason { other, lost, gave_up };

struct elect_state {
    elect_state(const elect_settings& c, const asio::any_io_executor& ex)
        : cfg(c)
        , stop_event(ex, clock::time_point::max())
        , restarts(c.max_restarts) {}

    const elect_settings& cfg;
    int signal = 0;                           ///< the first SIGINT/SIGTERM received
    programs::child_process* child = nullptr; ///< while a child runs
    bool stop = false;                        ///< the run is over: signal, -once, fatal error
    int exit = exit_code::ok;                 ///< the status of the first stop request
    /// What the first stop request reports besides its status. A loss (-once) and giving up
    /// outrank a failed cleanup: a supervisor waiting for 3 or 4 must see it (the failure is
    /// on stderr). Kept apart from `exit`, which with -once may be the command's own status.
    stop_reason reason = stop_reason::other;
    asio::steady_timer stop_event; ///< cancelled on a stop request (a condition variable)
    restart_policy restarts;
    std::chrono::milliseconds session_ttl{0}; ///< in force for the current session
    elector* el = nullptr;                    ///< while campaigning
    std::string handed_over; ///< the session handed over (SIGUSR2 with -session-file)

    void request_stop(int code, stop_reason why = stop_reason::other) {
        if (!stop) {
            stop = true;
            exit = code;
            reason = why;
        }
        stop_event.cancel();
    }
    void cleanup_failed() {
        if (reason == stop_reason::other)
            exit = exit_code::error;
    }
};

asio::awaitable<bool> cancelled() {
    auto cs = co_await asio::this_coro::cancellation_state;
    co_return cs.cancelled() != asio::cancellation_type::none;
}

// Waits for the calling coroutine to be cancelled (at once if it was already).
asio::awaitable<void> park() {
    const bool already = co_await cancelled();
    if (already)
        co_return;
    asio::steady_timer never(co_await asio::this_coro::executor, clock::time_point::max());
    co_await never.async_wait(tuple_awaitable);
}

// Completes once a stop was requested, or when cancelled. (A pointer, and no co_await in
// a condition: `while (!st.stop) { ...; if (co_await cancelled()) ... }` with a reference
// parameter crashed on its first resume when built by g++ 12.)
asio::awaitable<void> stopped(elect_state* st) {
    for (;;) {
        if (st->stop)
            co_return;
        co_await st->stop_event.async_wait(tuple_awaitable);
        const bool ended = co_await cancelled();
        if (ended)
            co_return;
    }
}

// "exit status 1", "killed by signal 9 (Killed)", with how long the command ran.
std::string describe_end(int status, clock::duration ran) {
    return programs::describe_wait_status(status) + " after " +
           codec::go::format_duration(std::chrono::duration_cast<std::chrono::milliseconds>(ran));
}

// The command ended the term by itself (without -once): decides, says and asks for what
// comes next. Returns whether the term must park until the run cancels it (a stop, or a
// resign with the delay as its hold-off, was requested); otherwise the elector releases
// the key and campaigns at once.
bool after_exit(elect_state& st, int status, clock::duration ran) {
    const auto d = st.restarts.after_exit(status, ran);
    const auto delay = std::chrono::duration_cast<std::chrono::milliseconds>(d.delay);
    const auto limit = st.restarts.max_restarts();
    if (d.give_up) {
        // (-max-restarts=0: a single failure, no "1 times in a row".)
        const auto in_a_row =
            d.restart > 1 ? ", " + std::to_string(d.restart) + " times in a row" : std::string();
        say("Child failed (" + describe_end(status, ran) + ")" + in_a_row +
            "; giving up (-max-restarts=" + std::to_string(limit) + ")");
        st.request_stop(exit_code::restarts_exhausted, stop_reason::gave_up);
        return true;
    }
    std::string text = d.failed ? "Child failed (" : "Child exited (";
    text += describe_end(status, ran) + "); ";
    if (delay.count() > 0)
        text += "stepping down, campaigning again in " + codec::go::format_duration(delay);
    else
        text += "campaigning again";
    if (d.failed)
        text += " (restart " + std::to_string(d.restart) +
                (limit >= 0 ? " of " + std::to_string(limit) : std::string()) + ")";
    say(text);
    if (delay.count() == 0)
        return false;
    // Steps down: the elector cancels this term, releases the key and stays out of the race
    // for the delay (or until another candidate leads), keeping the session.
    st.el->async_resign(std::chrono::ceil<std::chrono::milliseconds>(d.delay), asio::detached);
    return true;
}

// The only waiter on the signal set: each SIGINT/SIGTERM goes to the running child (its
// process group) at once, and ends the run.
asio::awaitable<void> listen(asio::signal_set& signals, elect_state& st) {
    for (;;) {
        auto [ec, sig] = co_await signals.async_wait(tuple_awaitable);
        if (ec) {
            co_await park(); // cancelled: the run is over
            co_return;
        }
        // SIGUSR2 with -session-file: the session goes to the next conclave started with the
        // file, with nothing released; the command is stopped as by SIGTERM. (With no
        // session to hand over, between sessions, it is an ordinary stop.)
        bool hand_over = false;
        if (sig == hand_over_signal && st.handed_over.empty() && st.el != nullptr) {
            st.handed_over = st.el->hand_over();
            hand_over = !st.handed_over.empty();
        }
        if (sig == hand_over_signal)
            sig = SIGTERM;
        if (st.signal == 0)
            st.signal = sig;
        if (st.child != nullptr)
            st.child->signal(sig);
        st.request_stop(hand_over ? exit_code::ok : exit_code::interrupted_base + sig);
    }
}

// (A function, not a coroutine lambda: its frame holds its own copy of the term.)
asio::awaitable<std::tuple<error_code, hold_health>> term_health_change(leadership l,
                                                                        hold_health seen) {
    co_return co_await l.async_wait_health_change(seen, tuple_awaitable);
}

// One term: the leader task. Cancelled by the elector when leadership is lost, or when the
// run is stopped; the key is released after it returns.
asio::awaitable<void> lead(elect_state& st, leadership l) {
    // Cancellation is observed, never thrown: the child must be stopped first.
    co_await asio::this_coro::throw_if_cancelled(false);
    const auto& cfg = st.cfg;
    const auto token = l.token().to_string();
    if (cfg.verbose)
        say("Elected leader of '" + cfg.key + "' (" + token + ")");

    const bool deposed = co_await cancelled();
    if (deposed)
        co_return;
    if (st.stop) {
        co_await park(); // the run is cancelled: the key is then released once
        co_return;
    }

    const auto o = child_options(cfg.command, cfg.shell, cfg.pass_stdin,
                                 {"CONSUL_LOCK_HELD=true", "CONCLAVE_LEADER=true",
                                  "CONCLAVE_LOCK_TOKEN=" + token,
                                  "CONCLAVE_SESSION_TTL=" + ttl_seconds(st.session_ttl)});
    std::unique_ptr<programs::child_process> child;
    try {
        child = std::make_unique<programs::child_process>(o);
    } catch (const std::system_error& e) {
        say("Error starting child '" + o.argv.front() + "': " + e.code().message() +
            " (check the command and PATH)");
    }
    if (!child) {
        st.request_stop(exit_code::error);
        co_await park(); // the run is cancelled: the key is then released once
        co_return;
    }
    const auto started = clock::now();
    st.child = child.get();
    struct forget {
        elect_state& st;
        ~forget() { st.child = nullptr; }
    } forget_child{st};
    if (cfg.verbose)
        say("Started child (pid " + std::to_string(child->pid()) + ")");

    // The relay never completes by itself: it only reports jeopardy while the child runs.
    health_source health{[l](hold_health seen) { return term_health_change(l, seen); },
                         [l] { return l.remaining(); }};
    const auto r =
        co_await (programs::async_wait_exit(*child) ||
                  relay_health(std::move(health), child->pid(), cfg.signals, "Leadership"));
    const auto ec = r.index() == 0 ? std::get<0>(r) : error_code{asio::error::operation_aborted};
    if (!ec) {
        // The child ended by itself: so does the term, and what it started
        // (`sh -c 'worker & exit 1'`) must not run on once the key is released, nor pile up
        // over restarts. The exited command is not reaped yet, so its process group id
        // still names its group.
        child->signal(SIGKILL);
        const int status = child->reap();
        const auto ran = clock::now() - started;
        const bool leading = l.lease().held().has_value();
        // (Not when a signal to conclave, forwarded, ended it.)
        const bool restarting = !cfg.once && !st.stop;
        if (!leading)
            say("Leadership lost while the child ran");
        else if (cfg.verbose && !restarting) // (after_exit reports the exit otherwise)
            say("Child terminated (" + programs::describe_wait_status(status) +
                "), ending the term");
        bool wait_for_cancel = false;
        if (cfg.once && leading)
            st.request_stop(programs::shell_status(status));
        else if (cfg.once)
            st.request_stop(exit_code::lock_lost, stop_reason::lost);
        else if (restarting)
            wait_for_cancel = after_exit(st, status, ran);
        if (st.stop || wait_for_cancel)
            co_await park(); // as above: released once, by the cancelled run
        co_return;
    }

    // Cancelled: deposed, or the run is stopping (the signal already went to the child).
    co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
    int status = 0;
    if (st.signal != 0) {
        if (cfg.verbose)
            say("Shutdown triggered, killing child");
        status = co_await stop_child(*child, 0, nullptr);
    } else {
        say("Leadership lost, killing child");
        status = co_await stop_child(*child, SIGTERM, nullptr);
        if (cfg.once)
            st.request_stop(exit_code::lock_lost, stop_reason::lost);
    }
    if (cfg.verbose)
        say("Child terminated (" + programs::describe_wait_status(status) + ")");
}

// What the elector's run does with its sessions, on stderr. A first session that cannot be
// created ends the run; later ones are retried by the elector.
void on_session(elect_state& st, bool& had_session, bool& said_end, const session_event& e) {
    const auto& cfg = st.cfg;
    const auto text = [&e] { return std::string(conclave::error(e.ec, e.diag).what()); };
    switch (e.what) {
    case session_event::kind::created:
        had_session = true;
        st.session_ttl = e.current->ttl();
        if (cfg.verbose && e.current->resumed())
            say("Resumed session " + e.current->id() + " from '" + cfg.session_file + "'");
        if (const auto problem = write_session_file(cfg.session_file, e.current->id());
            !problem.empty()) {
            say(problem);
            st.request_stop(exit_code::error);
        } else if (cfg.verbose) {
            say("Campaigning for '" + cfg.key + "' as '" + cfg.value + "'");
        }
        break;
    case session_event::kind::create_failed:
        if (!had_session || !e.retry_in) {
            say("Election failed: failed to create session: " + text());
            said_end = true;
            st.request_stop(exit_code::error);
        } else if (!st.stop) {
            say("Failed to create session: " + text() + "; retrying in " +
                codec::go::format_duration(*e.retry_in));
        }
        break;
    case session_event::kind::lost:
        if (!st.stop)
            say("Session lost, campaigning again with a new session");
        break;
    case session_event::kind::destroy_failed:
        say("Session cleanup failed: " + e.ec.message() + " (Consul drops it when its TTL of " +
            codec::go::format_duration(cfg.ttl) + " runs out)");
        if (st.stop)
            st.cleanup_failed();
        break;
    }
}

// Campaigns until the run stops: the elector makes a new session after each one lost.
asio::awaitable<void> campaign(elect_state& st, client& consul) {
    const auto& cfg = st.cfg;
    bool had_session = false;
    bool said_end = false; // the run's end is on stderr already
    auto report = [&st, &had_session, &said_end](const session_event& e) {
        on_session(st, had_session, said_end, e);
    };
    elector el{consul, cfg.key, elector_options{}.with_value(cfg.value).with_on_session(report)};
    st.el = &el;
    leader_task task = [&st](leadership l) { return lead(st, std::move(l)); };
    // The session of `consul lock` (TTL -ttl, bound to serfHealth, keys released when it
    // ends), with -lock-delay; with -session-file, first the one a predecessor handed over.
    auto scfg = held_session_config(cfg, session_behavior::release);
    // Ends when the run stops (a signal, -once, giving up: the elector is then cancelled,
    // releases the key and destroys its session) or on what a new session cannot fix.
    auto r = co_await (el.async_run(std::move(scfg), task, with_text) || stopped(&st));
    st.el = nullptr;
    if (!st.handed_over.empty()) {
        say("Session " + st.handed_over +
            " handed over: the leadership stays for the conclave started with -session-file '" +
            cfg.session_file + "'");
        co_return;
    }
    remove_session_file(cfg.session_file); // (the session ended: nothing to resume)
    bool denied = false;                   // by Consul's ACLs: the token may not write the key
    if (r.index() == 0) {
        const auto f = failure_of(std::get<0>(std::get<0>(r)));
        // (A first session not created was said already; permission_denied's text names the
        // permission missing.)
        if (!said_end)
            say(f.ec == errc::conflict ? "Election failed: Existing key does not match lock use"
                                       : "Election failed: " + f.text);
        denied = f.ec == errc::permission_denied;
        st.request_stop(exit_code::error);
    }

    // Delete the key when nobody holds it (another candidate may lead by now).
    if (denied)
        co_return;
    lock key{consul, cfg.key};
    auto [destroy_ec] = co_await key.async_destroy(tuple_awaitable);
    if (destroy_ec && destroy_ec != errc::conflict) {
        say("Key cleanup failed: " + destroy_ec.message());
        st.cleanup_failed();
    } else if (cfg.verbose) {
        say(destroy_ec ? "Cleanup aborted, key in use" : "Cleanup succeeded");
    }
}

} // namespace

asio::awaitable<int> run_elect(const elect_settings& cfg, client& consul,
                               asio::signal_set& signals) {
    if (auto stop = co_await check_agent(consul, signals, "campaigning"))
        co_return *stop;
    const auto ex = co_await asio::this_coro::executor;
    elect_state st(cfg, ex);
    co_await (campaign(st, consul) || listen(signals, st));
    co_return st.exit;
}

asio::awaitable<int> print_leader(const std::string& key, client& consul) {
    elector el{consul, key};
    auto [ec, leader] = co_await el.async_leader(tuple_awaitable);
    if (ec == errc::conflict) {
        say("'" + key + "' is not an election key: Existing key does not match lock use");
        co_return exit_code::error;
    }
    if (ec) {
        std::string text = "Error querying Consul agent: " + ec.message();
        if (is_retryable(ec))
            text += " (Consul at " + consul.config().describe_address() +
                    "; set -http-addr or CONSUL_HTTP_ADDR)";
        say(text);
        co_return exit_code::error;
    }
    if (!leader) {
        say("no leader");
        co_return exit_code::error;
    }
    std::printf("%s\n", leader->value.c_str());
    co_return exit_code::ok;
}

} // namespace conclave::cli
