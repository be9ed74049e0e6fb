// SPDX-License-Identifier: BSL-1.0
// The acquire driver without a server (recipes/common/acquire_driver.hpp): its helpers, and
// drive_acquire performing the machine's actions with scripted views, waits that return at
// once and scripted attempts (an io_context, no timers, no sockets). Also rules of the
// acquire machine that acquire_fsm_test.cpp does not reach.
#include "recipes/common/acquire_driver.hpp"
#include "support/catch.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <optional>
#include <string>
#include <vector>

using namespace conclave;
using namespace conclave::detail;
using namespace std::chrono_literals;

namespace {

using clock_type = std::chrono::steady_clock;
using kind = acquire_action::kind;

const clock_type::time_point t0 = clock_type::time_point{} + 1000h;
const clock_type::time_point session_end = t0 + 10s;

acquire_view view(key_state key, clock_type::time_point now = t0) {
    acquire_view v;
    v.now = now;
    v.session_deadline = session_end;
    v.key = key;
    return v;
}

attempt_outcome committed() {
    attempt_outcome o;
    o.committed = true;
    return o;
}

attempt_outcome refused(refusal why) {
    attempt_outcome o;
    o.why = why;
    return o;
}

// What the recipe would see and do, in order, and what the driver asked of it.
struct script {
    std::vector<acquire_view> views; // the last one repeats
    std::vector<std::optional<attempt_outcome>> outcomes;
    std::size_t views_taken = 0;
    std::size_t attempts = 0;
    std::size_t forgets = 0;
    std::vector<clock_type::time_point> waits;

    acquire_view next_view() {
        const auto i = std::min(views_taken++, views.size() - 1);
        return views[i];
    }
};

asio::awaitable<void> waited(script& s, clock_type::time_point until) {
    s.waits.push_back(until);
    co_return;
}

asio::awaitable<std::optional<attempt_outcome>> attempted(script& s) {
    co_return s.outcomes.at(s.attempts++);
}

asio::awaitable<acquire_action> drive(acquire_fsm& fsm, script& s,
                                      std::optional<acquire_action> first) {
    const auto start = first ? *first : fsm.next(s.next_view());
    co_return co_await drive_acquire(
        fsm, std::nullopt, start, [&] { return s.next_view(); },
        [&](clock_type::time_point until) { return waited(s, until); },
        [&] { return attempted(s); }, [&] { ++s.forgets; });
}

// Runs the driver to its finish.
acquire_action run(script& s, std::optional<acquire_action> first = std::nullopt) {
    asio::io_context ioc;
    acquire_fsm fsm{std::nullopt, write_rule::lock_key};
    std::optional<acquire_action> out;
    asio::co_spawn(ioc, drive(fsm, s, first), [&](std::exception_ptr e, acquire_action a) {
        if (e)
            std::rethrow_exception(e);
        out = a;
    });
    ioc.run();
    REQUIRE(out);
    return *out;
}

} // namespace

// ---- helpers ---------------------------------------------------------------------------

TEST_CASE("acquire driver: an attempt without a deadline has none", "[acquire-driver]") {
    CHECK_FALSE(attempt_deadline(std::nullopt));
}

TEST_CASE("acquire driver: an attempt gets at least the minimum time, never less",
          "[acquire-driver]") {
    const auto before = clock_type::now();
    const auto spent = attempt_deadline(before - 1s); // a budget already spent
    REQUIRE(spent);
    CHECK(*spent >= before + minimum_attempt_time);
    const auto far = clock_type::now() + 1h; // plenty of time: the budget's own
    CHECK(attempt_deadline(far) == far);
}

TEST_CASE("acquire driver: an acquire without a grant is cancelled, failed or out of time",
          "[acquire-driver]") {
    const auto failure = make_error_code(errc::unavailable);
    CHECK(ungranted_outcome(true, failure) == acquire_outcome::cancelled); // cancelled first
    CHECK(ungranted_outcome(true, {}) == acquire_outcome::cancelled);
    CHECK(ungranted_outcome(false, failure) == acquire_outcome::failed);
    CHECK(ungranted_outcome(false, {}) == acquire_outcome::timed_out);
}

TEST_CASE("acquire driver: a wait without a deadline ends with a grant or an error",
          "[acquire-driver]") {
    using result = std::pair<error_code, std::optional<std::string>>;
    auto granted = waited_result<std::string>(result{{}, std::string("grant")});
    CHECK_FALSE(granted.first);
    CHECK(granted.second == "grant");
    auto failed = waited_result<std::string>(result{make_error_code(errc::conflict), {}});
    CHECK(failed.first == errc::conflict);
    CHECK(failed.second.empty());
    // Empty without an error (only a deadline gives that): a timeout, never a silent empty.
    auto empty = waited_result<std::string>(result{});
    CHECK(empty.first == errc::timeout);
}

TEST_CASE("acquire driver: an acquire with an empty session is an invalid argument",
          "[acquire-driver]") {
    try {
        require_session(nullptr, "lock acquire with an empty conclave::session");
        FAIL("no exception");
    } catch (const boost::system::system_error& e) {
        CHECK(e.code() == errc::invalid_argument);
        CHECK_THAT(e.what(), conclave::test::contains_text("empty conclave::session"));
    }
}

// ---- drive_acquire -----------------------------------------------------------------------

TEST_CASE("acquire driver: a free key is attempted once, and the commit ends the acquire",
          "[acquire-driver]") {
    script s;
    s.views = {view(key_state::free)};
    s.outcomes = {committed()};
    const auto a = run(s);
    CHECK(a.what == kind::finish);
    CHECK(a.end == acquire_end::taken);
    CHECK(s.attempts == 1);
    CHECK(s.waits.empty());
    CHECK(s.forgets == 0);
}

TEST_CASE("acquire driver: a wait is bounded as the machine says, then it decides again",
          "[acquire-driver]") {
    script s;
    s.views = {view(key_state::held_elsewhere), view(key_state::held_elsewhere),
               view(key_state::free)};
    s.outcomes = {committed()};
    const auto a = run(s);
    CHECK(a.end == acquire_end::taken);
    CHECK(s.waits == std::vector<clock_type::time_point>{session_end, session_end});
    CHECK(s.attempts == 1);
}

TEST_CASE("acquire driver: a conflict makes it forget the view and judge a fresh one",
          "[acquire-driver]") {
    SECTION("gone on the fresh read") {
        script s;
        s.views = {view(key_state::conflict), view(key_state::free)};
        s.outcomes = {committed()};
        CHECK(run(s).end == acquire_end::taken);
        CHECK(s.forgets == 1);
    }
    SECTION("still there: the acquire fails with conflict") {
        script s;
        s.views = {view(key_state::conflict)};
        const auto a = run(s);
        CHECK(a.end == acquire_end::failed);
        CHECK(a.ec == errc::conflict);
        CHECK(s.forgets == 1);
        CHECK(s.attempts == 0);
    }
}

TEST_CASE("acquire driver: an attempt cancelled ends the acquire as cancelled",
          "[acquire-driver]") {
    script s;
    s.views = {view(key_state::free)};
    s.outcomes = {std::nullopt};
    CHECK(run(s).end == acquire_end::cancelled);
    CHECK(s.attempts == 1);
}

TEST_CASE("acquire driver: a refusal on a view the news already changed is retried at once",
          "[acquire-driver]") {
    script s;
    auto later = view(key_state::free);
    later.state_index = 7; // the attempt was built on state 0
    s.views = {view(key_state::free), later};
    s.outcomes = {refused(refusal::held), committed()};
    CHECK(run(s).end == acquire_end::taken);
    CHECK(s.attempts == 2);
    CHECK(s.waits.empty()); // no wait for news that came already
}

TEST_CASE("acquire driver: a finish it is given performs nothing", "[acquire-driver]") {
    script s;
    s.views = {view(key_state::free)};
    acquire_action done{kind::finish};
    done.end = acquire_end::already_held;
    CHECK(run(s, done).end == acquire_end::already_held);
    CHECK(s.views_taken == 0);
    CHECK(s.attempts == 0);
}

// ---- acquire machine rules not reached by acquire_fsm_test.cpp --------------------------

TEST_CASE("acquire machine: another process's turn that ends within the budget is waited out",
          "[acquire-fsm]") {
    acquire_fsm fsm{t0 + 100ms, write_rule::lock_key};
    auto v = view(key_state::others_turn);
    v.yield_until = t0 + 40ms;
    const auto a = fsm.next(v);
    CHECK(a.what == kind::wait);
    CHECK(a.until == t0 + 40ms);
    CHECK_FALSE(fsm.maybe_holding());
}

TEST_CASE("acquire machine: the wait after an old view's refusal is bounded by the budget",
          "[acquire-fsm]") {
    acquire_fsm fsm{t0 + 20ms, write_rule::lock_key};
    REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
    const auto a = fsm.attempted(view(key_state::free), refused(refusal::stale));
    CHECK(a.what == kind::wait);
    CHECK(a.until == t0 + 20ms); // not t0 + 50 ms
}

TEST_CASE("acquire machine: an answered attempt starts the retry pauses over", "[acquire-fsm]") {
    acquire_fsm fsm{std::nullopt, write_rule::lock_key};
    attempt_outcome unknown;
    unknown.ec = make_error_code(errc::unavailable);
    REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
    CHECK(fsm.attempted(view(key_state::free), unknown).pause == 50ms);
    REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
    CHECK(fsm.attempted(view(key_state::free), unknown).pause == 100ms);
    REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
    // Answered (refused as held): the pauses start again from 50 ms.
    const auto a = fsm.attempted(view(key_state::free), refused(refusal::held));
    CHECK(a.what == kind::wait);
    CHECK(a.until == t0 + 50ms);
}

TEST_CASE("acquire machine: a refused attempt leaves nothing to undo", "[acquire-fsm]") {
    for (const auto why : {refusal::lock_delay, refusal::held, refusal::stale, refusal::other}) {
        acquire_fsm fsm{std::nullopt, write_rule::lock_key};
        REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
        REQUIRE(fsm.maybe_holding());
        fsm.attempted(view(key_state::free), refused(why));
        CHECK_FALSE(fsm.maybe_holding());
        CHECK(fsm.looked());
    }
}

TEST_CASE("acquire machine: a lost session comes before refused reads, and both before the "
          "budget",
          "[acquire-fsm]") {
    acquire_fsm fsm{t0, write_rule::lock_key};
    REQUIRE(fsm.next(view(key_state::held_elsewhere)).what == kind::wait); // looked
    auto v = view(key_state::held_elsewhere, t0 + 1s);
    v.read_refused = true;
    CHECK(fsm.next(v).end == acquire_end::read_denied); // not timed out
    v.session_lost = true;
    CHECK(fsm.next(v).end == acquire_end::failed);
}
