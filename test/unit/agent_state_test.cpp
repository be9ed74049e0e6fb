// SPDX-License-Identifier: BSL-1.0
// The dev agent's state store and watch trees, without sockets or real time.
#include "devagent/src/go/goutil.hpp"
#include "devagent/src/store/radix.hpp"
#include "devagent/src/store/state.hpp"
#include "support/catch.hpp"

#include <algorithm>

using namespace conclave::dev::detail;
using conclave::kv_entry;
using namespace std::chrono_literals;

namespace {

bool closed(const channel_source& ch, std::uint64_t id) {
    return std::find(ch.closed.begin(), ch.closed.end(), id) != ch.closed.end();
}

kv_entry entry(std::string key, std::string value = "v", std::uint64_t flags = 0,
               std::string session = {}) {
    kv_entry e;
    e.key = std::move(key);
    e.value = std::move(value);
    e.flags = flags;
    e.session = std::move(session);
    return e;
}

struct fixture {
    store s{"node1", "dc1"};
    steady_time now{std::chrono::hours(1)};
    std::vector<std::uint64_t> last_closed;

    fixture() {
        s.on_change = [this](const std::vector<std::uint64_t>& c) { last_closed = c; };
    }

    std::string session(std::int64_t lock_delay_ns = 0, std::string behavior = "release",
                        std::string node = "node1") {
        session_rec r;
        static int n = 0;
        char id[40];
        std::snprintf(id, sizeof id, "00000000-0000-0000-0000-%012d", ++n);
        r.id = id;
        r.key = *memdb_uuid(r.id).bytes;
        r.node = std::move(node);
        r.lock_delay_ns = lock_delay_ns;
        r.behavior = std::move(behavior);
        r.node_checks = std::vector<std::string>{};
        const std::string err = s.session_create(r);
        REQUIRE(err.empty());
        return r.id;
    }
};

} // namespace

TEST_CASE("agent: radix watches wake like go-immutable-radix channels", "[unit][agent]") {
    channel_source ch;
    radix_tree t(ch);
    const auto k = [](std::string s) { return s + '\0'; };
    t.insert(k("p/far"));
    t.insert(k("p/dir/other"));
    ch.closed.clear();

    // A missing key watches the node nearest to it: a sibling write wakes it...
    const auto missing = t.watch_key(k("p/dir/missing"));
    t.insert(k("p/dir/other2"));
    CHECK(closed(ch, missing));
    ch.closed.clear();
    // ...a write elsewhere does not.
    const auto missing2 = t.watch_key(k("p/dir/missing"));
    t.insert(k("p/far"));
    CHECK_FALSE(closed(ch, missing2));
    ch.closed.clear();

    // An existing key watches its leaf: only its own update or delete wakes it.
    const auto leaf = t.watch_key(k("p/far"));
    t.insert(k("p/fax"));
    CHECK_FALSE(closed(ch, leaf));
    t.insert(k("p/far"));
    CHECK(closed(ch, leaf));
    ch.closed.clear();
    const auto leaf2 = t.watch_key(k("p/far"));
    CHECK(t.erase(k("p/far")));
    CHECK(closed(ch, leaf2));
    CHECK_FALSE(t.erase(k("p/far")));
    ch.closed.clear();

    // A prefix watch wakes on writes under the prefix only.
    t.insert(k("w/a"));
    const auto prefix = t.watch_prefix("w/");
    t.insert(k("x"));
    CHECK_FALSE(closed(ch, prefix));
    t.insert(k("w/b"));
    CHECK(closed(ch, prefix));
    ch.closed.clear();

    const auto under = t.watch_key(k("w/b"));
    const std::size_t before = t.size();
    CHECK(t.erase_prefix("w/"));
    CHECK(closed(ch, under));
    CHECK(t.size() == before - 2);
    CHECK_FALSE(t.erase_prefix("w/"));
    t.clear();
    CHECK(t.size() == 0);
}

TEST_CASE("agent: KV writes, indexes and no-op rewrites", "[unit][agent]") {
    fixture f;
    CHECK(f.s.kv_get("k", nullptr).index == 0); // reported as 1 by the HTTP layer
    CHECK(f.s.kv_apply(kv_op::set, entry("k", "a", 42), f.now).result);
    const auto first = f.s.kv_get("k", nullptr);
    REQUIRE(first.entry);
    CHECK(first.index >= 2);
    CHECK(first.entry->create_index == first.entry->modify_index);

    // Identical rewrite: true, same ModifyIndex, but a Raft index is used.
    const auto before = f.s.last_index();
    CHECK(f.s.kv_apply(kv_op::set, entry("k", "a", 42), f.now).result);
    CHECK(f.s.kv_get("k", nullptr).entry->modify_index == first.entry->modify_index);
    CHECK(f.s.last_index() == before + 1);

    // CAS: 0 only creates, N must match.
    kv_entry cas = entry("k", "b");
    cas.modify_index = 0;
    CHECK_FALSE(f.s.kv_apply(kv_op::cas, cas, f.now).result);
    cas.modify_index = first.entry->modify_index;
    CHECK(f.s.kv_apply(kv_op::cas, cas, f.now).result);
    CHECK(f.s.kv_get("k", nullptr).entry->flags == 0); // flagless write resets Flags

    kv_entry del = entry("k");
    del.modify_index = 1;
    CHECK_FALSE(f.s.kv_apply(kv_op::delete_cas, del, f.now).result);
    del.key = "missing";
    CHECK(f.s.kv_apply(kv_op::delete_cas, del, f.now).result);
    CHECK(f.s.kv_apply(kv_op::set, entry(""), f.now).error == "Must provide key");
}

TEST_CASE("agent: lock semantics and LockIndex", "[unit][agent]") {
    fixture f;
    const std::string s1 = f.session();
    const std::string s2 = f.session();
    CHECK(f.s.kv_apply(kv_op::lock, entry("k", "v", 0, s1), f.now).result);
    CHECK(f.s.kv_get("k", nullptr).entry->lock_index == 1);
    CHECK_FALSE(f.s.kv_apply(kv_op::lock, entry("k", "v", 0, s2), f.now).result);
    // Re-acquire by the holder keeps LockIndex.
    CHECK(f.s.kv_apply(kv_op::lock, entry("k", "w", 0, s1), f.now).result);
    CHECK(f.s.kv_get("k", nullptr).entry->lock_index == 1);
    // A plain write keeps the holder and resets LockIndex.
    CHECK(f.s.kv_apply(kv_op::set, entry("k", "plain"), f.now).result);
    CHECK(f.s.kv_get("k", nullptr).entry->session == s1);
    CHECK(f.s.kv_get("k", nullptr).entry->lock_index == 0);
    CHECK_FALSE(f.s.kv_apply(kv_op::unlock, entry("k", "v", 0, s2), f.now).result);
    CHECK(f.s.kv_apply(kv_op::unlock, entry("k", "v", 0, s1), f.now).result);
    CHECK(f.s.kv_apply(kv_op::lock, entry("k", "v", 0, s2), f.now).result);
    CHECK(f.s.kv_get("k", nullptr).entry->lock_index == 1);

    CHECK(f.s.kv_apply(kv_op::lock, entry("k2", "v", 0, ""), f.now).error == "missing session");
    const std::string unknown = "11111111-2222-3333-4444-555555555555";
    CHECK(f.s.kv_apply(kv_op::lock, entry("k2", "v", 0, unknown), f.now).error ==
          "invalid session \"" + unknown + "\"");
    CHECK(f.s.kv_apply(kv_op::lock, entry("k2", "v", 0, "bad"), f.now).error ==
          "failed session lookup: index error: UUID must be 36 characters");
    CHECK_FALSE(f.s.kv_apply(kv_op::unlock, entry("k2", "v", 0, unknown), f.now).result);
}

TEST_CASE("agent: invalidation releases or deletes held keys and arms a capped lock-delay",
          "[unit][agent]") {
    fixture f;
    const std::string rel = f.session(120'000'000'000); // 120 s, capped at 60 s
    const std::string del = f.session(0, "delete");
    const std::string other = f.session();
    REQUIRE(f.s.kv_apply(kv_op::lock, entry("a", "x", 7, rel), f.now).result);
    REQUIRE(f.s.kv_apply(kv_op::lock, entry("b", "x", 0, rel), f.now).result);
    REQUIRE(f.s.kv_apply(kv_op::lock, entry("c", "x", 0, del), f.now).result);
    REQUIRE(f.s.kv_apply(kv_op::lock, entry("d", "x", 0, del), f.now).result);
    REQUIRE(f.s.kv_apply(kv_op::unlock, entry("d", "x", 0, del), f.now).result);

    CHECK(f.s.session_destroy(rel, f.now).empty());
    const auto a = f.s.kv_get("a", nullptr);
    REQUIRE(a.entry);
    CHECK(a.entry->session.empty());
    CHECK(a.entry->flags == 7);
    CHECK(a.entry->lock_index == 1);
    CHECK(a.entry->modify_index == f.s.kv_get("b", nullptr).entry->modify_index);
    CHECK(a.entry->modify_index == f.s.sessions_index());

    CHECK_FALSE(f.s.kv_apply(kv_op::lock, entry("a", "x", 0, other), f.now + 59s).result);
    CHECK(f.s.kv_apply(kv_op::set, entry("a", "plain"), f.now + 1s).result); // not affected
    CHECK(f.s.kv_apply(kv_op::lock, entry("a", "x", 0, other), f.now + 61s).result);

    CHECK(f.s.session_destroy(del, f.now).empty());
    CHECK(f.s.kv_get("c", nullptr).entry == nullptr);
    CHECK(f.s.kv_get("d", nullptr).entry != nullptr); // released before: spared
    CHECK(f.s.session_destroy(del, f.now).empty());   // idempotent
    CHECK(f.s.session_destroy("nope", f.now) ==
          "failed session lookup: index error: UUID must be 36 characters");
}

TEST_CASE("agent: a session's keys are released whatever the case its ID was spelled in",
          "[unit][agent]") {
    // Consul indexes a KV entry's session by the UUID's bytes: a lock taken with an upper-case
    // spelling of the ID is still the session's, and goes with it.
    fixture f;
    const std::string other = f.session();
    // The fixture's IDs are all digits: ones with letters, to spell them both ways.
    const auto lettered = [&](std::string id, std::string behavior) {
        session_rec r;
        r.id = std::move(id);
        r.key = *memdb_uuid(r.id).bytes;
        r.node = "node1";
        r.lock_delay_ns = 0;
        r.behavior = std::move(behavior);
        r.node_checks = std::vector<std::string>{};
        REQUIRE(f.s.session_create(r).empty());
        return r.id;
    };
    const std::string id = lettered("abcdef00-0000-0000-0000-0000000000aa", "release");
    const std::string spelled = "ABCDEF00-0000-0000-0000-0000000000AA";
    REQUIRE(f.s.kv_apply(kv_op::lock, entry("up", "x", 0, spelled), f.now).result);
    REQUIRE(f.s.kv_apply(kv_op::lock, entry("low", "x", 0, id), f.now).result);
    CHECK(f.s.kv_get("up", nullptr).entry->session == spelled); // kept as written

    // A transaction that unlocks "up" and then fails puts the lock back, still the session's.
    std::vector<txn_op_in> ops(2);
    ops[0].verb = "unlock";
    ops[0].entry = entry("up", "x", 0, spelled);
    ops[1].verb = "check-index";
    ops[1].entry = entry("up");
    ops[1].entry.modify_index = 1;
    REQUIRE_FALSE(f.s.txn(ops, false, f.now).applied);
    CHECK(f.s.kv_get("up", nullptr).entry->session == spelled);

    REQUIRE(f.s.session_destroy(id, f.now).empty());
    CHECK(f.s.kv_get("up", nullptr).entry->session.empty());
    CHECK(f.s.kv_get("low", nullptr).entry->session.empty());
    // Another session can take both now (no lock-delay on this one).
    CHECK(f.s.kv_apply(kv_op::lock, entry("up", "y", 0, other), f.now).result);
    CHECK(f.s.kv_apply(kv_op::lock, entry("low", "y", 0, other), f.now).result);

    // With the "delete" behaviour the key goes with the session.
    const std::string doomed = lettered("abcdef00-0000-0000-0000-0000000000bb", "delete");
    REQUIRE(f.s.kv_apply(kv_op::lock, entry("gone", "x", 0, "ABCDEF00-0000-0000-0000-0000000000BB"),
                         f.now)
                .result);
    REQUIRE(f.s.session_destroy(doomed, f.now).empty());
    CHECK(f.s.kv_get("gone", nullptr).entry == nullptr);
}

TEST_CASE("agent: transactions are all or nothing and report every failing op", "[unit][agent]") {
    fixture f;
    REQUIRE(f.s.kv_apply(kv_op::set, entry("keep", "1"), f.now).result);
    const auto kv_index = f.s.kvs_max_index();
    std::vector<txn_op_in> ops(4);
    ops[0].verb = "set";
    ops[0].entry = entry("a");
    ops[1].verb = "delete-tree";
    ops[1].entry = entry("");
    ops[2].verb = "cas";
    ops[2].entry = entry("c");
    ops[2].entry.modify_index = 1;
    ops[3].verb = "get";
    ops[3].entry = entry("nope");
    const txn_outcome o = f.s.txn(ops, false, f.now);
    CHECK_FALSE(o.applied);
    CHECK(o.results.empty());
    REQUIRE(o.errors.size() == 2);
    CHECK(o.errors[0] ==
          std::make_pair(std::size_t(2), std::string("failed to set key \"c\", index is stale")));
    CHECK(o.errors[1].second == "key \"nope\" doesn't exist");
    CHECK(f.s.kv_get("keep", nullptr).entry != nullptr);
    CHECK(f.s.kv_get("a", nullptr).entry == nullptr);
    CHECK(f.s.kvs_max_index() == kv_index);

    std::vector<txn_op_in> good(2);
    good[0].verb = "set";
    good[0].entry = entry("a", "x", 5);
    good[1].verb = "get";
    good[1].entry = entry("a");
    const txn_outcome ok = f.s.txn(good, false, f.now);
    CHECK(ok.applied);
    REQUIRE(ok.results.size() == 2);
    CHECK_FALSE(ok.results[0].with_value);
    CHECK(ok.results[1].with_value);
    CHECK(ok.results[1].entry.flags == 5);

    std::vector<txn_op_in> unknown(1);
    unknown[0].verb = "get-or-empty";
    unknown[0].entry = entry("a");
    CHECK(f.s.txn(unknown, true, f.now).errors.at(0).second == "unknown KV verb \"get-or-empty\"");
}

TEST_CASE("agent: api.KVOp names, exactly as Consul spells them", "[unit][agent]") {
    const std::pair<const char*, kv_op> names[] = {
        {"set", kv_op::set},
        {"cas", kv_op::cas},
        {"lock", kv_op::lock},
        {"unlock", kv_op::unlock},
        {"delete", kv_op::del},
        {"delete-cas", kv_op::delete_cas},
        {"delete-tree", kv_op::delete_tree},
        {"get", kv_op::get},
        {"get-tree", kv_op::get_tree},
        {"check-session", kv_op::check_session},
        {"check-index", kv_op::check_index},
        {"check-not-exists", kv_op::check_not_exists},
    };
    for (const auto& [name, op] : names) {
        const std::string n = name;
        INFO(n);
        CHECK(kv_op_from_verb(n) == op);
        CHECK(kv_op_from_verb(n + " ") == kv_op::unknown);
        CHECK(kv_op_from_verb(n.substr(1)) == kv_op::unknown);
        CHECK(kv_op_from_verb(n.substr(0, n.size() - 1)) == kv_op::unknown);
        std::string upper = n;
        upper[0] = char(upper[0] - 'a' + 'A');
        CHECK(kv_op_from_verb(upper) == kv_op::unknown);
    }
    for (const char* other : {"", "get-or-empty", "delete-cat", "check-indey", "gets", "lockk"})
        CHECK(kv_op_from_verb(other) == kv_op::unknown);
}

TEST_CASE("agent: tombstones keep list indexes until reaped", "[unit][agent]") {
    fixture f;
    for (const char* k : {"p/bar", "p/baz", "p/foo", "p/moo"})
        REQUIRE(f.s.kv_apply(kv_op::set, entry(k), f.now).result);
    const auto foo = f.s.kv_get("p/foo", nullptr).index;
    REQUIRE(f.s.kv_apply(kv_op::del, entry("p/moo"), f.now).result);
    const auto deleted = f.s.kv_list("p/", nullptr).index;
    CHECK(deleted > foo);
    CHECK(f.s.kv_get("p/moo", nullptr).index == deleted);
    CHECK(f.s.kv_keys("p/", "", nullptr).index == deleted);
    CHECK(f.s.reap_tombstones() == 1);
    CHECK(f.s.kv_list("p/", nullptr).index == foo);

    // A recursive delete leaves one tombstone, keyed by its prefix.
    REQUIRE(f.s.kv_apply(kv_op::delete_tree, entry("p/"), f.now).result);
    CHECK(f.s.kv_list("p/", nullptr).entries.empty());
    CHECK(f.s.kv_list("p/", nullptr).index == f.s.last_index());
    CHECK(f.s.kv_list("p/b", nullptr).index == f.s.kvs_max_index()); // nothing under it
}

TEST_CASE("agent: health checks and node deregistration invalidate bound sessions",
          "[unit][agent]") {
    fixture f;
    register_request r;
    r.node = "foo";
    r.address = "127.0.0.2";
    check_rec alive;
    alive.id = "foo:alive";
    alive.status = "passing";
    r.checks.push_back(alive);
    REQUIRE(f.s.catalog_register(r, f.now).empty());

    session_rec s;
    s.id = "aaaaaaaa-0000-0000-0000-000000000001";
    s.key = *memdb_uuid(s.id).bytes;
    s.node = "foo";
    s.node_checks = std::vector<std::string>{"foo:alive"};
    REQUIRE(f.s.session_create(s).empty());
    s.id = "aaaaaaaa-0000-0000-0000-000000000002";
    s.key = *memdb_uuid(s.id).bytes;
    s.node_checks = std::vector<std::string>{"serfHealth"};
    CHECK(f.s.session_create(s) == "Missing check 'serfHealth' registration");

    r.checks[0].status = "warning";
    REQUIRE(f.s.catalog_register(r, f.now).empty());
    CHECK(f.s.session_count() == 1);
    r.checks[0].status = "critical";
    REQUIRE(f.s.catalog_register(r, f.now).empty());
    CHECK(f.s.session_count() == 0);
    s.node_checks = std::vector<std::string>{"foo:alive"};
    CHECK(f.s.session_create(s) == "Check 'foo:alive' is in critical state");

    s.node_checks = std::vector<std::string>{};
    REQUIRE(f.s.session_create(s).empty());
    CHECK(f.s.node_sessions("FOO", nullptr).sessions.size() == 1);
    REQUIRE(f.s.catalog_deregister("foo", "", "", f.now).empty());
    CHECK(f.s.session_count() == 0);
    CHECK(f.s.node("foo") == nullptr);
    s.id = "aaaaaaaa-0000-0000-0000-000000000003";
    s.key = *memdb_uuid(s.id).bytes;
    CHECK(f.s.session_create(s) == "Missing node registration");
    CHECK(f.s.catalog_deregister("", "", "", f.now) == "Must provide node");
}

TEST_CASE("agent: reset starts the index again", "[unit][agent]") {
    fixture f;
    for (int i = 0; i < 10; ++i)
        REQUIRE(f.s.kv_apply(kv_op::set, entry("k" + std::to_string(i)), f.now).result);
    const auto high = f.s.last_index();
    f.s.reset();
    CHECK(f.s.key_count() == 0);
    CHECK(f.s.last_index() < high);
    CHECK(f.s.node("node1") != nullptr); // the agent's node is registered again
    REQUIRE(f.s.kv_apply(kv_op::set, entry("k"), f.now).result);
    CHECK(f.s.kv_get("k", nullptr).index >= 2);
}

namespace {

txn_op_in txn_op(std::string verb, kv_entry e) {
    txn_op_in op;
    op.verb = std::move(verb);
    op.entry = std::move(e);
    return op;
}

std::vector<kv_entry> all_entries(const store& s) {
    std::vector<kv_entry> out;
    for (const kv_entry* e : s.kv_list("", nullptr).entries)
        out.push_back(*e);
    return out;
}

} // namespace

TEST_CASE("agent: a failed transaction puts overwritten entries and held keys back",
          "[unit][agent]") {
    fixture f;
    const std::string s1 = f.session();
    const std::string s2 = f.session();
    REQUIRE(f.s.txn({txn_op("lock", entry("held/a", "old", 3, s1))}, false, f.now).applied);
    REQUIRE(f.s.txn({txn_op("lock", entry("held/a", "again", 4, s1))}, false, f.now).applied);
    REQUIRE(f.s.kv_apply(kv_op::set, entry("plain", std::string(100, 'p')), f.now).result);
    const auto before = all_entries(f.s);

    // Each write in turn replaced, then undone when a later operation fails; the undo log
    // is used again by each transaction.
    for (int round = 0; round < 3; ++round) {
        const auto index = f.s.kvs_max_index();
        std::vector<txn_op_in> ops;
        ops.push_back(txn_op("unlock", entry("held/a", "", 0, s1)));
        ops.push_back(txn_op("lock", entry("held/a", "mine", 0, s2)));
        ops.push_back(txn_op("set", entry("plain", "short")));
        ops.push_back(txn_op("set", entry("new", "n")));
        ops.push_back(txn_op("delete", entry("new")));
        ops.push_back(txn_op("check-index", entry("plain")));
        const txn_outcome o = f.s.txn(std::move(ops), false, f.now);
        CHECK_FALSE(o.applied);
        REQUIRE(o.errors.size() == 1);
        CHECK(o.errors[0].first == 5);
        CHECK(all_entries(f.s) == before);
        CHECK(f.s.kvs_max_index() == index);
        REQUIRE(
            f.s.txn({txn_op("set", entry("other", std::to_string(round)))}, false, f.now).applied);
        REQUIRE(f.s.txn({txn_op("delete", entry("other"))}, false, f.now).applied);
        CHECK(f.s.txn({txn_op("check-not-exists", entry("plain"))}, true, f.now).errors.size() ==
              1);
    }
    const auto after_rounds = all_entries(f.s);

    // A transaction of one failing operation changes nothing (it keeps no undo log).
    for (auto op :
         {txn_op("lock", entry("held/a", "x", 0, s2)),
          txn_op("unlock", entry("held/a", "x", 0, s2)), txn_op("cas", entry("plain", "x")),
          txn_op("delete-cas", entry("plain")), txn_op("check-session", entry("held/a", "", 0, s2)),
          txn_op("get", entry("missing")), txn_op("frobnicate", entry("plain"))}) {
        op.entry.modify_index = 1;
        INFO(op.verb);
        const auto idx = f.s.kvs_max_index();
        const txn_outcome o = f.s.txn({op}, false, f.now);
        CHECK_FALSE(o.applied);
        CHECK(o.errors.size() == 1);
        CHECK(all_entries(f.s) == after_rounds);
        CHECK(f.s.kvs_max_index() == idx);
    }

    // The held keys survived: destroying the holder releases its lock.
    const txn_outcome got = f.s.txn({txn_op("get", entry("held/a"))}, true, f.now);
    REQUIRE(got.results.size() == 1);
    CHECK(got.results[0].entry.session == s1);
    CHECK(got.results[0].entry.value == "again");
    CHECK(got.results[0].entry.flags == 4);
    CHECK(got.results[0].entry.lock_index == 1);
    REQUIRE(f.s.session_destroy(s1, f.now).empty());
    CHECK(f.s.kv_get("held/a", nullptr).entry->session.empty());
    CHECK(f.s.kv_get("held/a", nullptr).entry->value == "again");
    // And s2 holds nothing: destroying it leaves the key alone.
    REQUIRE(f.s.txn({txn_op("lock", entry("held/a", "s2", 0, s2))}, false, f.now).applied);
    REQUIRE(f.s.txn({txn_op("unlock", entry("held/a", "s2", 0, s2))}, false, f.now).applied);
    REQUIRE(f.s.session_destroy(s2, f.now).empty());
    CHECK(f.s.kv_get("held/a", nullptr).entry->value == "s2");
}

TEST_CASE("agent: a transaction's writes keep their values in the store", "[unit][agent]") {
    fixture f;
    const std::string s1 = f.session();
    const std::string big(300, 'v');
    std::vector<txn_op_in> ops;
    ops.push_back(txn_op("set", entry("a", big, 1)));
    ops.push_back(txn_op("lock", entry("b", big + "b", 2, s1)));
    ops.push_back(txn_op("get", entry("a")));
    ops.push_back(txn_op("get", entry("b")));
    const txn_outcome o = f.s.txn(std::move(ops), false, f.now);
    REQUIRE(o.applied);
    REQUIRE(o.results.size() == 4);
    CHECK(o.results[0].entry.key == "a");
    CHECK(o.results[1].entry.session == s1);
    CHECK(o.results[1].entry.lock_index == 1);
    CHECK(o.results[2].entry.value == big);
    CHECK(o.results[3].entry.value == big + "b");
    CHECK(f.s.kv_get("b", nullptr).entry->value == big + "b");
}
