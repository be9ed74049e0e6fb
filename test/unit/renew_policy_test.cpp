// SPDX-License-Identifier: BSL-1.0
// The renew schedule and local deadline of a session, without clocks or sockets.
#include "recipes/session/renew_policy.hpp"
#include "support/catch.hpp"

using conclave::detail::renew_policy;
using namespace std::chrono_literals;
using tp = renew_policy::clock::time_point;

TEST_CASE("renew at TTL/2, the deadline is the last renew's start plus TTL", "[renew]") {
    const tp t0{};
    renew_policy p{10s, t0};
    CHECK(p.next_renew() == t0 + 5s);
    CHECK(p.deadline() == t0 + 10s);
    CHECK_FALSE(p.expired(t0 + 9s));
    CHECK(p.expired(t0 + 10s));
    p.on_success(t0 + 5s, 10s);
    CHECK(p.deadline() == t0 + 15s);
    CHECK(p.next_renew() == t0 + 10s);
}

TEST_CASE("a larger TTL from Consul is adopted, a smaller one is not", "[renew]") {
    const tp t0{};
    renew_policy p{10s, t0};
    p.on_success(t0 + 5s, 20s);
    CHECK(p.ttl() == 20s);
    CHECK(p.deadline() == t0 + 25s);
    p.on_success(t0 + 15s, 5s);
    CHECK(p.ttl() == 20s);
}

TEST_CASE("transient failures back off, but a try always fits before the deadline", "[renew]") {
    const tp t0{};
    renew_policy p{16s, t0};
    p.on_transient_failure(t0 + 8s);
    CHECK(p.next_renew() == t0 + 9s); // ttl/16
    p.on_transient_failure(t0 + 9s);
    CHECK(p.next_renew() == t0 + 11s); // doubled
    p.on_transient_failure(t0 + 11s);
    CHECK(p.next_renew() == t0 + 14s); // moved earlier so one try fits: deadline - ttl/8
    CHECK(p.consecutive_failures() == 3);
    p.on_transient_failure(t0 + 14s);
    CHECK(p.next_renew() == t0 + 18s); // past that point: full backoff, no busy loop
    p.on_transient_failure(t0 + 14s + 1ms);
    CHECK(p.next_renew() > t0 + 14s + 1ms); // never an immediate retry
    p.on_success(t0 + 14s, 16s);
    CHECK(p.consecutive_failures() == 0);
    CHECK(p.deadline() == t0 + 30s);
    CHECK(p.next_renew() == t0 + 22s);
}

TEST_CASE("a renew request never runs past the deadline", "[renew]") {
    const tp t0{};
    renew_policy p{4s, t0};
    CHECK(p.request_budget(t0 + 1s, 10s) == 3s);
    CHECK(p.request_budget(t0 + 1s, 1s) == 1s);
    CHECK(p.request_budget(t0 + 5s, 1s) == 0s);
}

TEST_CASE("an older success does not move the deadline back", "[renew]") {
    const tp t0{};
    renew_policy p{10s, t0};
    p.on_success(t0 + 6s, 10s);
    p.on_success(t0 + 4s, 10s);
    CHECK(p.deadline() == t0 + 16s);
}

TEST_CASE("jeopardy: a failed renew, or none succeeded with 3/8 of the TTL left", "[renew]") {
    const tp t0{};
    renew_policy p{16s, t0};
    CHECK(p.jeopardy_at() == t0 + 10s);
    CHECK_FALSE(p.in_jeopardy(t0 + 8s));     // the renew is due, not late yet
    CHECK(p.in_jeopardy(t0 + 10s));          // late: nothing succeeded
    p.on_transient_failure(t0 + 8s + 100ms); // a failure is jeopardy at once
    CHECK(p.in_jeopardy(t0 + 8s + 100ms));
    p.on_success(t0 + 9s, 16s); // and a success ends it
    CHECK_FALSE(p.in_jeopardy(t0 + 9s));
    CHECK(p.jeopardy_at() == t0 + 19s);
}

TEST_CASE("a bound TTL check caps the deadline at its last pass plus its TTL", "[renew]") {
    const tp t0{};
    renew_policy p{16s, t0};
    p.bind_check(3s, t0);
    CHECK(p.deadline() == t0 + 3s);
    CHECK(p.next_pass(t0) == t0 + 1s); // a third of the check's TTL
    CHECK(p.jeopardy_at() == t0 + 3000ms - 3000ms * 3 / 8);
    p.on_check_passed(t0 + 1s);
    CHECK(p.deadline() == t0 + 4s);
    CHECK(p.next_pass(t0 + 1s) == t0 + 2s);
    CHECK_FALSE(p.in_jeopardy(t0 + 2s));
    // A failed pass: in jeopardy at once, the next try an eighth of the TTL later.
    p.on_check_failure();
    CHECK(p.in_jeopardy(t0 + 2s));
    CHECK(p.next_pass(t0 + 2s) == t0 + 2s + 3000ms / 8);
    CHECK(p.expired(t0 + 4s));
    // The renewals' own deadline still applies when it is the earlier one.
    renew_policy q{4s, t0};
    q.bind_check(10s, t0);
    CHECK(q.deadline() == t0 + 4s);
    // Renewal retries aim at the renewals' deadline, not the check's.
    renew_policy r{16s, t0};
    r.bind_check(2s, t0);
    r.on_transient_failure(t0 + 11s);
    CHECK(r.next_renew() == t0 + 12s);
}
