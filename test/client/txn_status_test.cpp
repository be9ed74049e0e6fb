// SPDX-License-Identifier: BSL-1.0
// /v1/txn, /v1/status/leader and /v1/agent/self against the backend.
#include "client_fixture.hpp"
#include "support/catch.hpp"

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

TEST_CASE_METHOD(client_fixture, "a txn acquires and reads back in one request", "[client][txn]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await new_session(session_options{}.with_lock_delay(0ms));
        std::vector<txn_op> ops0{txn_op::lock(p + "k", s, "value", lock_flag_value),
                                 txn_op::get(p + "k")};
        auto r = co_await consul.async_txn(ops0);
        CHECK(r.committed);
        CHECK(r.errors.empty());
        REQUIRE(r.results.size() == 2);
        CHECK(r.results[0].session == s);
        CHECK(r.results[0].lock_index == 1);
        CHECK(r.results[0].value.empty()); // only get verbs return values
        CHECK(r.results[1].value == "value");
        CHECK(r.results[1].flags == lock_flag_value);
        CHECK(r.results[1].modify_index == r.results[0].modify_index);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a failing txn rolls back everything (409)", "[client][txn]") {
    auto body = [&]() -> asio::awaitable<void> {
        std::vector<txn_op> ops1{txn_op::set(p + "a", "1"), txn_op::lock(p + "k", "", "v"),
                                 txn_op::get(p + "missing")};
        auto r = co_await consul.async_txn(ops1);
        CHECK_FALSE(r.committed);
        CHECK(r.results.empty());
        REQUIRE(r.errors.size() == 2);
        CHECK(r.errors[0].op_index == 1);
        CHECK(r.errors[0].what.find("missing session") != std::string::npos);
        CHECK(r.errors[1].op_index == 2);
        CHECK(r.errors[1].what.find("doesn't exist") != std::string::npos);
        auto r0 = co_await consul.async_kv_get(p + "a");
        CHECK_FALSE(r0.entry); // nothing applied
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "check-session guards a write (the fencing pattern)",
                 "[client][txn]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s1 = co_await new_session(session_options{}.with_lock_delay(0ms));
        auto s2 = co_await new_session(session_options{}.with_lock_delay(0ms));
        const auto r1 =
            co_await consul.async_kv_put(p + "lock", "", kv_put_options{}.with_acquire(s1));
        CHECK(r1);
        std::vector<txn_op> ops2{txn_op::check_session(p + "lock", s1),
                                 txn_op::set(p + "data", "by s1")};
        auto ok = co_await consul.async_txn(ops2);
        CHECK(ok.committed);
        std::vector<txn_op> ops3{txn_op::check_session(p + "lock", s2),
                                 txn_op::set(p + "data", "by s2")};
        auto refused = co_await consul.async_txn(ops3);
        CHECK_FALSE(refused.committed);
        REQUIRE(refused.errors.size() == 1);
        CHECK(refused.errors[0].what.find("failed session check") != std::string::npos);
        auto data = co_await consul.async_kv_get(p + "data");
        REQUIRE(data.entry);
        CHECK(data.entry->value == "by s1");
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "txn verbs: cas, check-index, delete-cas, get-tree, unlock",
                 "[client][txn]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await new_session(session_options{}.with_lock_delay(0ms));
        std::vector<txn_op> ops4{txn_op::set(p + "t/a", "1", 7), txn_op::set(p + "t/b", "2"),
                                 txn_op::lock(p + "t/l", s, "")};
        auto w = co_await consul.async_txn(ops4);
        REQUIRE(w.committed);
        REQUIRE(w.results.size() == 3);
        const auto ia = w.results[0].modify_index;
        CHECK(w.results[0].flags == 7);
        std::vector<txn_op> ops5{txn_op::cas(p + "t/a", "x", ia + 100)};
        auto stale = co_await consul.async_txn(ops5);
        CHECK_FALSE(stale.committed);
        std::vector<txn_op> ops6{txn_op::check_index(p + "t/a", ia),
                                 txn_op::cas(p + "t/a", "x", ia), txn_op::unlock(p + "t/l", s, ""),
                                 txn_op::check_not_exists(p + "t/zzz")};
        auto good = co_await consul.async_txn(ops6);
        CHECK(good.committed);
        std::vector<txn_op> ops7{txn_op::get_tree(p + "t/")};
        auto tree = co_await consul.async_txn(ops7);
        REQUIRE(tree.committed);
        REQUIRE(tree.results.size() == 3);
        CHECK(tree.results[0].value == "x");
        CHECK(tree.results[2].session.empty());
        CHECK(tree.meta.known_leader);
        const auto ib = tree.results[1].modify_index;
        std::vector<txn_op> ops8{txn_op::remove_cas(p + "t/b", ib), txn_op::remove(p + "t/a"),
                                 txn_op::remove_tree(p + "t/l")};
        auto del = co_await consul.async_txn(ops8);
        CHECK(del.committed);
        CHECK(del.results.empty());
        auto r2 = co_await consul.async_kv_keys(p + "t/");
        CHECK(r2.keys.empty());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "status leader and agent self answer", "[client][status]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto leader = co_await consul.async_status_leader();
        CHECK_FALSE(leader.empty());
        auto self = co_await consul.async_agent_self();
        CHECK_FALSE(self.node_name.empty());
        CHECK_FALSE(self.datacenter.empty());
    };
    run(ioc, body());
}
