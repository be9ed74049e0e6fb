// SPDX-License-Identifier: BSL-1.0
// The acquire machine without a server: every rule of acquire_fsm.hpp, one view at a time.
#include "recipes/common/acquire_fsm.hpp"
#include "support/catch.hpp"

#include <boost/asio/error.hpp>

using namespace conclave;
using namespace conclave::detail;
using namespace std::chrono_literals;

namespace {

using clock = std::chrono::steady_clock;
using kind = acquire_action::kind;

const clock::time_point t0 = clock::time_point{} + 1000h;
const clock::time_point session_end = t0 + 10s;

acquire_view view(key_state key, clock::time_point now = t0) {
    acquire_view v;
    v.now = now;
    v.session_deadline = session_end;
    v.key = key;
    return v;
}

acquire_fsm no_budget() {
    return acquire_fsm{std::nullopt, write_rule::lock_key, 1000ms};
}

acquire_fsm budget(clock::duration b) {
    return acquire_fsm{t0 + b, write_rule::lock_key, 1000ms};
}

bool finished(const acquire_action& a, acquire_end end) {
    return a.what == kind::finish && a.end == end;
}

} // namespace

TEST_CASE("acquire machine: a grant handed over ends the acquire, before anything else",
          "[acquire-fsm]") {
    auto fsm = budget(0s);
    auto v = view(key_state::held_elsewhere, t0 + 1s);
    v.granted_here = true;
    v.session_lost = true; // (lost meanwhile: the grant still came first)
    CHECK(finished(fsm.next(v), acquire_end::handed_here));

    auto other = no_budget();
    auto w = view(key_state::held_elsewhere);
    w.granted_by_other = true;
    CHECK(finished(other.next(w), acquire_end::handed_remote));
}

TEST_CASE("acquire machine: a lost session or refused reads end the acquire", "[acquire-fsm]") {
    auto fsm = no_budget();
    auto v = view(key_state::free);
    v.session_lost = true;
    auto a = fsm.next(v);
    CHECK(finished(a, acquire_end::failed));
    CHECK_FALSE(a.ec); // the driver gives the session's own loss reason

    auto denied = no_budget();
    auto w = view(key_state::free);
    w.read_refused = true;
    CHECK(finished(denied.next(w), acquire_end::read_denied));
}

TEST_CASE("acquire machine: a spent budget allows one look", "[acquire-fsm]") {
    SECTION("not looked yet: wait for the read, until the session's deadline") {
        auto fsm = budget(0s);
        auto a = fsm.next(view(key_state::unknown, t0 + 1ms));
        CHECK(a.what == kind::wait);
        CHECK(a.until == session_end);
    }
    SECTION("seen taken: one wait bounded by the budget, then out of time") {
        auto fsm = budget(100ms);
        auto a = fsm.next(view(key_state::held_elsewhere));
        CHECK(a.what == kind::wait);
        CHECK(a.until == t0 + 100ms);
        CHECK(fsm.looked());
        CHECK(finished(fsm.next(view(key_state::held_elsewhere, t0 + 100ms)),
                       acquire_end::timed_out));
    }
    SECTION("Consul unreadable: out of time at once") {
        auto fsm = budget(0s);
        auto v = view(key_state::unknown, t0 + 1ms);
        v.read_failing = true;
        CHECK(finished(fsm.next(v), acquire_end::timed_out));
    }
    SECTION("a free key gets its one attempt") {
        auto fsm = budget(0s);
        CHECK(fsm.next(view(key_state::free, t0 + 1ms)).what == kind::attempt);
    }
}

TEST_CASE("acquire machine: waits while it is not our turn or the key is taken", "[acquire-fsm]") {
    for (auto key : {key_state::unknown, key_state::not_our_turn, key_state::held_here,
                     key_state::held_elsewhere}) {
        auto fsm = no_budget();
        auto a = fsm.next(view(key));
        CHECK(a.what == kind::wait);
        CHECK(a.until == session_end);
        CHECK(fsm.looked() == (key != key_state::unknown));
        CHECK_FALSE(fsm.maybe_holding());
    }
}

TEST_CASE("acquire machine: a key held by our session with no grant here is taken over",
          "[acquire-fsm]") {
    auto fsm = no_budget();
    CHECK(finished(fsm.next(view(key_state::ours)), acquire_end::already_held));
    CHECK_FALSE(fsm.maybe_holding()); // no write
}

TEST_CASE("acquire machine: a conflict is judged on a fresh read", "[acquire-fsm]") {
    auto fsm = no_budget();
    CHECK(fsm.next(view(key_state::conflict)).what == kind::reread);
    auto a = fsm.next(view(key_state::conflict));
    CHECK(finished(a, acquire_end::failed));
    CHECK(a.ec == errc::conflict);
    // Gone on the fresh read: the acquire goes on.
    auto other = no_budget();
    CHECK(other.next(view(key_state::conflict)).what == kind::reread);
    CHECK(other.next(view(key_state::free)).what == kind::attempt);
}

TEST_CASE("acquire machine: another process's turn is waited out unless the budget ends first",
          "[acquire-fsm]") {
    SECTION("no budget: wait until the turn ends") {
        auto fsm = no_budget();
        auto v = view(key_state::others_turn);
        v.yield_until = t0 + 40ms;
        auto a = fsm.next(v);
        CHECK(a.what == kind::wait);
        CHECK(a.until == t0 + 40ms);
    }
    SECTION("a release of ours under way: wait for it, whatever the budget") {
        auto fsm = budget(10ms);
        auto v = view(key_state::others_turn);
        v.yield_until = clock::time_point::max();
        auto a = fsm.next(v);
        CHECK(a.what == kind::wait);
        CHECK(a.until == t0 + 10ms);
    }
    SECTION("the budget ends before the turn: attempt now") {
        auto fsm = budget(10ms);
        auto v = view(key_state::others_turn);
        v.yield_until = t0 + 40ms;
        CHECK(fsm.next(v).what == kind::attempt);
        CHECK(fsm.maybe_holding());
    }
    SECTION("the turn is over") {
        auto fsm = no_budget();
        auto v = view(key_state::others_turn, t0 + 50ms);
        v.yield_until = t0 + 40ms;
        CHECK(fsm.next(v).what == kind::attempt);
    }
}

TEST_CASE("acquire machine: a free key left to those before us in line (a fair semaphore)",
          "[acquire-fsm]") {
    SECTION("a bounded acquire waits in line rather than jump it") {
        auto fsm = budget(10ms);
        auto v = view(key_state::others_first);
        v.yield_until = t0 + 40ms;
        auto a = fsm.next(v);
        CHECK(a.what == kind::wait);
        CHECK(a.until == t0 + 10ms);
        CHECK_FALSE(fsm.maybe_holding());
    }
    SECTION("and ends with its budget, not taken (after one look, as with a held key)") {
        auto fsm = budget(10ms);
        auto v = view(key_state::others_first, t0 + 20ms);
        v.yield_until = t0 + 40ms;
        CHECK(fsm.next(v).what == kind::wait);
        CHECK(finished(fsm.next(v), acquire_end::timed_out));
    }
    SECTION("the patience is over: attempt") {
        auto fsm = no_budget();
        auto v = view(key_state::others_first, t0 + 50ms);
        v.yield_until = t0 + 40ms;
        CHECK(fsm.next(v).what == kind::attempt);
    }
}

TEST_CASE("acquire machine: an attempt's outcome", "[acquire-fsm]") {
    auto fsm = no_budget();
    REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
    CHECK(fsm.maybe_holding());

    SECTION("committed: the grant") {
        attempt_outcome o;
        o.committed = true;
        CHECK(finished(fsm.attempted(view(key_state::free), o), acquire_end::taken));
        CHECK_FALSE(fsm.maybe_holding());
    }
    SECTION("unknown and transient: read again after a pause that doubles, still maybe held") {
        attempt_outcome o;
        o.ec = make_error_code(errc::unavailable);
        auto a = fsm.attempted(view(key_state::free), o);
        CHECK(a.what == kind::sleep);
        CHECK(a.reread);
        CHECK(a.pause == 50ms);
        CHECK(fsm.maybe_holding()); // the cleanup undoes it if the acquire ends here
        REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
        CHECK(fsm.attempted(view(key_state::free), o).pause == 100ms);
    }
    SECTION("unknown, not transient: fails with that error") {
        attempt_outcome o;
        o.ec = make_error_code(errc::bad_response);
        auto a = fsm.attempted(view(key_state::free), o);
        CHECK(finished(a, acquire_end::failed));
        CHECK(a.ec == errc::bad_response);
        CHECK(fsm.maybe_holding());
    }
    SECTION("refused by ACLs") {
        attempt_outcome o;
        o.why = refusal::denied;
        CHECK(finished(fsm.attempted(view(key_state::free), o), acquire_end::write_denied));
    }
    SECTION("refused by the lock-delay: pauses of 25 ms doubling up to the cap") {
        attempt_outcome o;
        o.why = refusal::lock_delay;
        std::vector<clock::duration> pauses;
        for (int i = 0; i < 8; ++i) {
            auto a = fsm.attempted(view(key_state::free), o);
            CHECK(a.what == kind::sleep);
            CHECK_FALSE(a.reread);
            pauses.push_back(a.pause);
            REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
        }
        CHECK(pauses.front() == 25ms);
        CHECK(pauses[1] == 50ms);
        CHECK(pauses.back() == 1000ms);
    }
    SECTION("refused because Consul no longer knows the session") {
        attempt_outcome o;
        o.why = refusal::session_gone;
        auto a = fsm.attempted(view(key_state::free), o);
        CHECK(finished(a, acquire_end::failed));
        CHECK(a.session_gone);
        CHECK(a.ec == errc::session_invalidated);
    }
    SECTION("refused because our view was old: wait for the news, bounded") {
        attempt_outcome o;
        o.why = refusal::stale;
        auto a = fsm.attempted(view(key_state::free), o);
        CHECK(a.what == kind::wait);
        CHECK(a.until == t0 + 50ms);
        CHECK(fsm.looked());
    }
    SECTION("refused on an old view, the news came during the attempt: decide again at once") {
        // (nothing would wake a wait for news that came already: a lost wake-up)
        attempt_outcome o;
        o.why = refusal::held;
        auto later = view(key_state::held_elsewhere);
        later.state_index = 7; // the attempt was built on state 0
        auto a = fsm.attempted(later, o);
        CHECK(a.what == kind::wait);
        CHECK(a.until == session_end); // for the holder's end, not a backoff
        later.key = key_state::free;
        CHECK(fsm.attempted(later, o).what == kind::attempt);
    }
    SECTION("cancelled during the attempt: cancelled, never out of time") {
        CHECK(finished(fsm.cancelled(), acquire_end::cancelled));
    }
}

TEST_CASE("acquire machine: an unknown outcome with the budget spent is out of time",
          "[acquire-fsm]") {
    auto fsm = budget(0s);
    REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
    attempt_outcome o;
    o.ec = make_error_code(errc::timeout);
    CHECK(finished(fsm.attempted(view(key_state::free, t0 + 1ms), o), acquire_end::timed_out));
    CHECK(fsm.maybe_holding()); // the driver still undoes it
}

TEST_CASE("acquire machine: a semaphore's refusals are lost races on the shared record",
          "[acquire-fsm]") {
    acquire_fsm fsm{std::nullopt, write_rule::shared_record};
    REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
    attempt_outcome o;
    o.why = refusal::stale;
    for (int i = 0; i < 8; ++i) {
        auto a = fsm.attempted(view(key_state::free), o);
        CHECK(a.what == kind::sleep);
        CHECK(a.reread);
        CHECK(a.pause >= 0ms);
        CHECK(a.pause <= 32ms); // random, under a cap doubling from 1 ms
        REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
    }
    o.why = refusal::denied;
    CHECK(finished(fsm.attempted(view(key_state::free), o), acquire_end::write_denied));
}

TEST_CASE("acquire machine: denied perhaps only for the extras: decide again", "[acquire-fsm]") {
    acquire_fsm fsm{std::nullopt, write_rule::shared_record};
    REQUIRE(fsm.next(view(key_state::free)).what == kind::attempt);
    attempt_outcome o;
    o.why = refusal::denied;
    o.denied_extras = true;
    CHECK(fsm.attempted(view(key_state::free), o).what == kind::attempt);
}

TEST_CASE("acquire machine: an attempt that grants only the waiters behind us", "[acquire-fsm]") {
    acquire_fsm fsm{std::nullopt, write_rule::shared_record};
    auto v = view(key_state::free);
    v.attempt_is_ours = false;
    REQUIRE(fsm.next(v).what == kind::attempt);
    CHECK_FALSE(fsm.maybe_holding()); // nothing of ours to undo
    attempt_outcome o;
    o.committed = true;
    // Granted to them: we go on waiting (our session's slot is busy).
    auto a = fsm.attempted(view(key_state::held_here), o);
    CHECK(a.what == kind::wait);
}

TEST_CASE("acquire machine: a state that forbids the acquire ends it without a second read",
          "[acquire-fsm]") {
    auto fsm = no_budget();
    auto v = view(key_state::refused);
    v.refused_ec = make_error_code(errc::limit_conflict);
    auto a = fsm.next(v);
    CHECK(finished(a, acquire_end::failed));
    CHECK(a.ec == errc::limit_conflict);
}

TEST_CASE("acquire machine: our turn coming is waited for without counting as a look",
          "[acquire-fsm]") {
    auto fsm = budget(0s);
    auto a = fsm.next(view(key_state::busy, t0 + 1ms));
    CHECK(a.what == kind::wait);
    CHECK_FALSE(fsm.looked());
}

TEST_CASE("acquire machine: a grant being handed to us is awaited past the budget",
          "[acquire-fsm]") {
    auto fsm = budget(10ms);
    REQUIRE(fsm.next(view(key_state::held_elsewhere)).what == kind::wait); // looked
    auto v = view(key_state::busy, t0 + 1s);
    v.verdict_pending = true;
    auto a = fsm.next(v);
    CHECK(a.what == kind::wait);
    CHECK(a.until == session_end); // not the spent budget
    v.verdict_pending = false;
    CHECK(finished(fsm.next(v), acquire_end::timed_out));
}
