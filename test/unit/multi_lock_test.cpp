// SPDX-License-Identifier: BSL-1.0
// The multi-lock without a server: its keys' validation, its transactions
// (recipes/multi_lock/multi_lock_ops.hpp), and the line of a client's acquires
// (multi_lock_line.hpp). A client whose io_context never runs: the keys' hubs are given
// their state as a local write would (key_hub::saw_write), and no request is ever sent.
#include "recipes/multi_lock/multi_lock_line.hpp"
#include "recipes/multi_lock/multi_lock_ops.hpp"
#include "recipes/multi_lock/multi_lock_state.hpp"
#include "support/catch.hpp"

#include <conclave/multi_lock.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>

#include <chrono>
#include <memory>
#include <optional>

using namespace conclave;
using namespace conclave::detail;

namespace {

using clock_type = std::chrono::steady_clock;

// A client and sessions that never reach a server.
struct fixture {
    asio::io_context ioc;
    client consul{ioc.get_executor()};

    std::shared_ptr<multi_lock_state> lock(std::vector<std::string> keys, std::string value = "") {
        multi_lock_options o;
        o.value = std::move(value);
        return std::make_shared<multi_lock_state>(consul, std::move(keys), std::move(o));
    }

    std::shared_ptr<session_state> session(std::string id) {
        auto s = std::make_shared<session_state>(consul, std::move(id), session_config{},
                                                 clock_type::now());
        s->gone_on_server = true; // (nothing to destroy in the background)
        return s;
    }

    // Makes `key`'s hub know the key as a lock key, held by `session` (empty: free).
    void see(const std::string& key, const std::string& session, std::uint64_t index,
             std::uint64_t flags = lock_flag_value) {
        kv_entry e;
        e.key = key;
        e.session = session;
        e.flags = flags;
        e.modify_index = index;
        key_hub::of(consul, key, {})->saw_write(e);
    }
};

// The error code a multi_lock constructor throws, if any.
std::optional<error_code> refusal_of(fixture& f, std::vector<std::string> keys) {
    try {
        multi_lock m{f.consul, std::move(keys)};
        return std::nullopt;
    } catch (const boost::system::system_error& e) {
        return e.code();
    }
}

std::vector<std::string> numbered_keys(std::size_t n) {
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < n; ++i)
        keys.push_back("k/" + std::to_string(100 + i));
    return keys;
}

} // namespace

TEST_CASE("multi_lock: a set without keys is refused", "[multi_lock]") {
    fixture f;
    CHECK(refusal_of(f, {}) == make_error_code(errc::invalid_argument));
}

TEST_CASE("multi_lock: at most 32 keys, the check and lock of each in one transaction",
          "[multi_lock]") {
    fixture f;
    CHECK(multi_lock::max_keys == 32);
    CHECK_FALSE(refusal_of(f, numbered_keys(32)));
    CHECK(refusal_of(f, numbered_keys(33)) == make_error_code(errc::invalid_argument));
}

TEST_CASE("multi_lock: an empty key is refused", "[multi_lock]") {
    fixture f;
    CHECK(refusal_of(f, {"a", ""}) == make_error_code(errc::invalid_argument));
}

TEST_CASE("multi_lock: a key given twice is refused, wherever it appears", "[multi_lock]") {
    fixture f;
    CHECK(refusal_of(f, {"b", "a", "b"}) == make_error_code(errc::invalid_argument));
    CHECK(refusal_of(f, {"a", "a"}) == make_error_code(errc::invalid_argument));
}

TEST_CASE("multi_lock: the keys are kept sorted (every process locks them in one order)",
          "[multi_lock]") {
    fixture f;
    multi_lock m{f.consul, {"svc/c", "svc/a", "svc/b"}};
    CHECK(m.keys() == std::vector<std::string>{"svc/a", "svc/b", "svc/c"});
}

TEST_CASE("multi_lock ops: each key checked as last seen, then locked with the session",
          "[multi_lock]") {
    fixture f;
    auto m = f.lock({"a", "b"}, "payload");
    f.see("b", "", 17); // known, free at ModifyIndex 17; "a" never read
    const auto ops = attempt_ops(*m, "sess");
    REQUIRE(ops.size() == 4);
    CHECK(ops[0].verb == kv_verb::check_not_exists);
    CHECK(ops[0].key == "a");
    CHECK(ops[1].verb == kv_verb::lock);
    CHECK(ops[1].key == "a");
    CHECK(ops[1].session == "sess");
    CHECK(ops[1].value == "payload");
    CHECK(ops[1].flags == lock_flag_value);
    CHECK(ops[2].verb == kv_verb::check_index);
    CHECK(ops[2].key == "b");
    CHECK(ops[2].index == 17);
    CHECK(ops[3].verb == kv_verb::lock);
    CHECK(ops[3].key == "b");
}

TEST_CASE("multi_lock ops: 32 keys make 64 operations, Consul's limit", "[multi_lock]") {
    fixture f;
    auto m = f.lock(numbered_keys(multi_lock::max_keys));
    const auto ops = attempt_ops(*m, "sess");
    CHECK(ops.size() == max_txn_ops);
}

TEST_CASE("multi_lock ops: the release unlocks every key but those another grant holds",
          "[multi_lock]") {
    fixture f;
    auto m = f.lock({"a", "b", "c"}, "v");
    auto s = f.session("sess");
    auto mine = std::make_shared<multi_lease_state>(m, s, fencing_token{"a", "sess", 1, 5});
    SECTION("held by nobody else: all three, in order") {
        const auto ops = release_ops(*m, "sess", mine.get());
        REQUIRE(ops.size() == 3);
        for (std::size_t i = 0; i < 3; ++i) {
            CHECK(ops[i].verb == kv_verb::unlock);
            CHECK(ops[i].session == "sess");
            CHECK(ops[i].value == "v");
            CHECK(ops[i].flags == lock_flag_value);
        }
        CHECK(ops[0].key == "a");
        CHECK(ops[2].key == "c");
    }
    SECTION("a key a live local grant took over is left to it") {
        auto other_lock = f.lock({"b"});
        auto other =
            std::make_shared<multi_lease_state>(other_lock, s, fencing_token{"b", "sess", 2, 6});
        m->hubs[1]->holder->grant = other;
        auto ops = release_ops(*m, "sess", mine.get());
        REQUIRE(ops.size() == 2);
        CHECK(ops[0].key == "a");
        CHECK(ops[1].key == "c");
        // Once that grant is released (or lost), the key is unlocked again.
        other->released = true;
        CHECK(release_ops(*m, "sess", mine.get()).size() == 3);
        other->mark_released();
    }
    SECTION("the grant being released is not another grant") {
        m->hubs[0]->holder->grant = mine;
        CHECK(release_ops(*m, "sess", mine.get()).size() == 3);
        // The undo of an acquire (no grant of its own) leaves a live grant's key alone.
        CHECK(release_ops(*m, "sess", nullptr).size() == 2);
    }
    mine->mark_released();
}

TEST_CASE("multi_lock ops: each key's entry is the last result that names it", "[multi_lock]") {
    const std::vector<std::string> keys{"a", "b", "c"};
    std::vector<kv_entry> results(4);
    results[0].key = "a";
    results[0].modify_index = 1; // the check-index answers with the key before
    results[1].key = "a";
    results[1].modify_index = 9; // the lock after
    results[2].key = "zz";       // not one of the keys
    results[3].key = "c";
    results[3].modify_index = 9;
    const auto by_key = entries_by_key(keys, results);
    REQUIRE(by_key.size() == 3);
    CHECK(by_key[0] == &results[1]);
    CHECK(by_key[1] == nullptr); // no answer for "b"
    CHECK(by_key[2] == &results[3]);
}

TEST_CASE("multi_lock guarded txn: a check per key in front, within 64 operations",
          "[multi_lock]") {
    const std::vector<std::string> keys{"a", "b"};
    std::vector<txn_op> ops{txn_op::set("x", "1"), txn_op::get("y")};
    REQUIRE_FALSE(guard_ops(keys, "sess", ops));
    REQUIRE(ops.size() == 4);
    CHECK(ops[0].verb == kv_verb::check_session);
    CHECK(ops[0].key == "a");
    CHECK(ops[0].session == "sess");
    CHECK(ops[1].verb == kv_verb::check_session);
    CHECK(ops[1].key == "b");
    CHECK(ops[2].verb == kv_verb::set);
    CHECK(ops[2].key == "x");
    CHECK(ops[3].verb == kv_verb::get);

    // The budget is 64 minus the keys: 62 ops fit with two keys, 63 do not.
    std::vector<txn_op> fits(62, txn_op::get("y"));
    CHECK_FALSE(guard_ops(keys, "sess", fits));
    CHECK(fits.size() == 64);
    std::vector<txn_op> too_many(63, txn_op::get("y"));
    CHECK(guard_ops(keys, "sess", too_many) == make_error_code(errc::invalid_argument));
    CHECK(too_many.size() == 63); // untouched
}

TEST_CASE("multi_lock guarded txn: the answer as the caller's ops see it", "[multi_lock]") {
    SECTION("committed: the checks' entries are dropped") {
        txn_result t;
        t.committed = true;
        t.results.resize(3);
        t.results[0].key = "a";
        t.results[1].key = "b";
        t.results[2].key = "y";
        CHECK(unguard_result(2, t));
        REQUIRE(t.results.size() == 1);
        CHECK(t.results[0].key == "y");
    }
    SECTION("rolled back by a caller's op: its position among the caller's ops") {
        txn_result t;
        t.errors.push_back({3, "index is stale"});
        CHECK(unguard_result(2, t));
        CHECK(t.errors[0].op_index == 1);
    }
    SECTION("rolled back by a check: the grant is lost, the answer left as it was") {
        txn_result t;
        t.errors.push_back({1, "lock not held"});
        t.errors.push_back({3, "index is stale"});
        CHECK_FALSE(unguard_result(2, t));
        CHECK(t.errors[0].op_index == 1);
        CHECK(t.errors[1].op_index == 3);
    }
}

TEST_CASE("multi_lock guarded txn: refused before any request when too big or lost",
          "[multi_lock]") {
    fixture f;
    auto m = f.lock({"a", "b"});
    auto s = f.session("sess");
    auto state = std::make_shared<multi_lease_state>(m, s, fencing_token{"a", "sess", 1, 5});
    auto lease = multi_lease_factory::make(state);
    std::optional<error_code> too_big, lost;
    lease.async_guarded_txn(std::vector<txn_op>(63, txn_op::get("y")),
                            [&](error_code ec, txn_result) { too_big = ec; });
    f.ioc.run();
    state->mark_lost(make_error_code(errc::lock_lost));
    lease.async_guarded_txn(std::vector<txn_op>{txn_op::get("y")},
                            [&](error_code ec, txn_result) { lost = ec; });
    f.ioc.restart();
    f.ioc.run();
    CHECK(too_big == make_error_code(errc::invalid_argument));
    CHECK(lost == make_error_code(errc::lock_lost));
}

// ---- the line of a client's acquires ----------------------------------------------------

TEST_CASE("multi_lock line: alone, or behind acquires of other keys, it is our turn",
          "[multi_lock]") {
    fixture f;
    auto line = multi_lock_line::of(f.consul);
    CHECK(multi_lock_line::of(f.consul) == line); // one per client
    auto older = f.lock({"x", "y"});
    auto mine = f.lock({"a", "b"});
    const std::string s1 = "s1", s2 = "s2";
    const multi_lock_line::place first{line, *older, s1};
    const multi_lock_line::place me{line, *mine, s2};
    CHECK(first.my_turn());
    CHECK(me.my_turn()); // no key in common
}

TEST_CASE("multi_lock line: an older overlapping acquire that could go now goes first",
          "[multi_lock]") {
    fixture f;
    auto line = multi_lock_line::of(f.consul);
    auto older = f.lock({"a", "b"});
    auto mine = f.lock({"b", "c"});
    const std::string s1 = "s1", s2 = "s2";
    auto first = std::make_unique<multi_lock_line::place>(line, *older, s1);
    const multi_lock_line::place me{line, *mine, s2};
    f.see("a", "", 3);
    f.see("b", "", 4);
    CHECK(first->my_turn());
    CHECK_FALSE(me.my_turn()); // both its keys are free: it goes first
    f.see("a", s1, 5);         // (its session holding one already changes nothing)
    CHECK_FALSE(me.my_turn());
    first.reset(); // it leaves the line
    CHECK(me.my_turn());
}

TEST_CASE("multi_lock line: an older acquire whose keys are not all read yet goes first",
          "[multi_lock]") {
    fixture f;
    auto line = multi_lock_line::of(f.consul);
    auto older = f.lock({"a", "b"});
    auto mine = f.lock({"b"});
    const std::string s1 = "s1", s2 = "s2";
    const multi_lock_line::place first{line, *older, s1};
    const multi_lock_line::place me{line, *mine, s2};
    f.see("b", "", 4); // "a" never read: it may be free
    CHECK_FALSE(me.my_turn());
}

TEST_CASE("multi_lock line: an acquire waiting for a key held elsewhere holds nobody back",
          "[multi_lock]") {
    fixture f;
    auto line = multi_lock_line::of(f.consul);
    // The older acquire wants {A, B}; B is held by the session of the younger acquire's
    // task, which now asks for A: waiting behind {A, B} would wait for itself.
    auto older = f.lock({"A", "B"});
    auto mine = f.lock({"A"});
    const std::string s1 = "s1", s2 = "s2";
    const multi_lock_line::place first{line, *older, s1};
    const multi_lock_line::place me{line, *mine, s2};
    f.see("A", "", 3);
    f.see("B", s2, 4);
    CHECK(me.my_turn());
}

TEST_CASE("multi_lock line: a key of the older acquire under a foreign flag holds nobody back",
          "[multi_lock]") {
    fixture f;
    auto line = multi_lock_line::of(f.consul);
    auto older = f.lock({"a", "b"});
    auto mine = f.lock({"b"});
    const std::string s1 = "s1", s2 = "s2";
    const multi_lock_line::place first{line, *older, s1};
    const multi_lock_line::place me{line, *mine, s2};
    f.see("a", "", 3, semaphore_flag_value); // a conflict: that acquire will fail
    f.see("b", "", 4);
    CHECK(me.my_turn());
}

TEST_CASE("multi_lock line: an older acquire waiting for a local grant of its session holds "
          "nobody back",
          "[multi_lock]") {
    fixture f;
    auto line = multi_lock_line::of(f.consul);
    auto older = f.lock({"a", "b"});
    auto mine = f.lock({"b"});
    auto holding = f.lock({"a"});
    auto s1 = f.session("s1");
    const std::string s2 = "s2";
    const multi_lock_line::place first{line, *older, s1->id};
    const multi_lock_line::place me{line, *mine, s2};
    f.see("a", "s1", 3);
    f.see("b", "", 4);
    // "a" is held by s1 with no grant of this process: s1's acquire takes it over, first.
    CHECK_FALSE(me.my_turn());
    // A live grant of this process holds "a" with s1: that acquire waits for its end.
    auto grant = std::make_shared<multi_lease_state>(holding, s1, fencing_token{"a", "s1", 1, 3});
    holding->hubs[0]->holder->grant = grant;
    CHECK(me.my_turn());
    grant->mark_released();
}

TEST_CASE("multi_lock line: an older acquire with a transaction in flight on its keys goes "
          "first",
          "[multi_lock]") {
    fixture f;
    auto line = multi_lock_line::of(f.consul);
    auto older = f.lock({"a", "b"});
    auto mine = f.lock({"b"});
    const std::string s1 = "s1", s2 = "s2";
    const multi_lock_line::place first{line, *older, s1};
    const multi_lock_line::place me{line, *mine, s2};
    f.see("a", "other", 3); // held elsewhere: it waits ...
    f.see("b", "", 4);
    CHECK(me.my_turn());
    {
        const attempt_scope in_flight{*older->hubs[0]}; // ... unless that may change now
        CHECK_FALSE(me.my_turn());
    }
    CHECK(me.my_turn());
}

TEST_CASE("multi_lock line: a younger acquire never holds back an older one", "[multi_lock]") {
    fixture f;
    auto line = multi_lock_line::of(f.consul);
    auto older = f.lock({"a"});
    auto younger = f.lock({"a"});
    const std::string s1 = "s1", s2 = "s2";
    const multi_lock_line::place first{line, *older, s1};
    const multi_lock_line::place second{line, *younger, s2};
    f.see("a", "", 3);
    CHECK(first.my_turn());
    CHECK_FALSE(second.my_turn());
}
