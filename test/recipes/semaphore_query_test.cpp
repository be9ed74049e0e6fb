// SPDX-License-Identifier: BSL-1.0
// semaphore::async_status: the live holders (with their contender keys' values) and the free
// slots, judged as an acquire judges the prefix, in one read.
#include "recipes_fixture.hpp"
#include "support/acl.hpp"

#include <conclave/observer.hpp>
#include <conclave/semaphore.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

// Every request a client sent, by endpoint, as its observer saw them end.
struct request_log : observer {
    std::vector<std::string> endpoints;
    std::vector<bool> blocking;
    void request_finished(const request_event& e) override {
        endpoints.emplace_back(e.endpoint);
        blocking.push_back(e.blocking);
    }
};

// What `op` (awaited with the default token) threw: its code and text.
template <class Op>
asio::awaitable<std::pair<error_code, std::string>> thrown_by(Op op) {
    try {
        co_await std::move(op);
    } catch (const conclave::error& e) {
        co_return std::pair<error_code, std::string>{e.code(), e.what()};
    }
    co_return std::pair<error_code, std::string>{};
}

} // namespace

TEST_CASE_METHOD(recipes_fixture,
                 "the status of a semaphore without .lock has every slot free and writes "
                 "nothing",
                 "[semaphore][status]") {
    auto body = [&]() -> asio::awaitable<void> {
        semaphore sem{consul, p + "fresh", 4};
        auto st = co_await sem.async_status();
        CHECK(st.limit == 4);
        CHECK(st.holders.empty());
        CHECK(st.free_slots == 4);
        CHECK(st.lock_modify_index == 0);
        auto keys = co_await consul.async_kv_keys(p);
        CHECK(keys.keys.empty()); // a status read creates no `.lock`

        // Once a permit came and went, `.lock` exists with no holder: still all free, at the
        // index `.lock` was read at.
        auto s = co_await session::async_create(consul, quick());
        auto got = co_await sem.async_acquire(s);
        co_await got.async_release();
        auto lock_key = co_await consul.async_kv_get(p + "fresh/.lock");
        REQUIRE(lock_key.entry);
        auto after = co_await sem.async_status();
        CHECK(after.limit == 4);
        CHECK(after.holders.empty());
        CHECK(after.free_slots == 4);
        CHECK(after.lock_modify_index == lock_key.entry->modify_index);
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "the status of a semaphore lists its holders with their values and the free "
                 "slots",
                 "[semaphore][status]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(5s));
        auto b = co_await session::async_create(consul, quick(5s));
        semaphore as_a{consul, p + "pool", 3, semaphore_options{}.with_value("worker a")};
        semaphore as_b{consul, p + "pool", 3, semaphore_options{}.with_value("worker b")};
        auto held_a = co_await as_a.async_acquire(a);
        auto held_b = co_await as_b.async_acquire(b);

        // Read by an object that holds nothing, as a dashboard would.
        semaphore onlooker{consul, p + "pool", 3};
        auto st = co_await onlooker.async_status();
        CHECK(st.limit == 3);
        CHECK(st.free_slots == 1);
        std::vector<semaphore_holder> expected{{a.id(), "worker a"}, {b.id(), "worker b"}};
        std::sort(expected.begin(), expected.end(),
                  [](const auto& x, const auto& y) { return x.session < y.session; });
        CHECK(st.holders == expected); // by session ID
        auto lock_key = co_await consul.async_kv_get(p + "pool/.lock");
        REQUIRE(lock_key.entry);
        CHECK(st.lock_modify_index == lock_key.entry->modify_index);
        CHECK(st.lock_modify_index == held_b.token().modify_index); // b's write was the last

        co_await held_a.async_release();
        auto one = co_await onlooker.async_status();
        REQUIRE(one.holders.size() == 1);
        CHECK(one.holders.front().session == b.id());
        CHECK(one.free_slots == 2);
        CHECK(one.lock_modify_index > st.lock_modify_index);

        co_await held_b.async_release();
        co_await onlooker.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a holder whose session was destroyed is no longer among the live holders",
                 "[semaphore][status]") {
    auto body = [&]() -> asio::awaitable<void> {
        const std::string pre = p + "crash";
        auto a = co_await session::async_create(consul, quick(5s));
        auto b = co_await session::async_create(consul, quick(5s));
        semaphore sem{consul, pre, 2, semaphore_options{}.with_value("v")};
        auto held_a = co_await sem.async_acquire(a);
        auto held_b = co_await sem.async_acquire(b);
        auto both = co_await sem.async_status();
        CHECK(both.holders.size() == 2);
        CHECK(both.free_slots == 0);

        // b's holder crashes: its session ends on Consul, which releases (and keeps) its
        // contender key. `.lock` still lists it until the next acquire's write.
        co_await consul.async_session_destroy(b.id());
        auto st = co_await sem.async_status();
        REQUIRE(st.holders.size() == 1);
        CHECK(st.holders.front().session == a.id());
        CHECK(st.holders.front().value == "v");
        CHECK(st.free_slots == 1);
        auto lock_key = co_await consul.async_kv_get(pre + "/.lock");
        REQUIRE(lock_key.entry);
        CHECK(lock_key.entry->value.find(b.id()) != std::string::npos); // pruned, not removed
        CHECK(st.lock_modify_index == lock_key.entry->modify_index);

        co_await held_b.async_wait_lost(awaitable_tuple);
        co_await held_a.async_release();
        co_await consul.async_kv_delete(pre + "/", kv_delete_options{}.with_recurse());
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "the status of a .lock written by another client: more holders than slots "
                 "leave none free, a holder alive by another key has no value",
                 "[semaphore][status][interop]") {
    auto body = [&]() -> asio::awaitable<void> {
        const std::string pre = p + "go";
        const auto raw = session_options{}.with_ttl(15s).without_node_checks();
        auto first = co_await consul.async_session_create(raw);
        auto second = co_await consul.async_session_create(raw);
        const auto contender = kv_put_options{}.with_flags(semaphore_flag_value);
        co_await consul.async_kv_put(pre + "/" + first, "go",
                                     kv_put_options{contender}.with_acquire(first));
        // `second` holds a key under the prefix, but not its contender key: alive to
        // Go's pruneDeadHolders (and to an acquire), with no value to report.
        co_await consul.async_kv_put(pre + "/nested/key", "",
                                     kv_put_options{}.with_acquire(second));
        co_await consul.async_kv_put(pre + "/.lock",
                                     R"({"Limit":1,"Holders":{")" + first + R"(":true,")" + second +
                                         R"(":true}})",
                                     contender);
        semaphore sem{consul, pre, 1};
        auto st = co_await sem.async_status();
        CHECK(st.limit == 1);
        CHECK(st.free_slots == 0); // 1 − 2 holders: none, not a wrapped-around count
        REQUIRE(st.holders.size() == 2);
        for (const auto& h : st.holders) {
            if (h.session == first)
                CHECK(h.value == std::optional<std::string>{"go"});
            else
                CHECK_FALSE(h.value);
        }

        co_await consul.async_session_destroy(first);
        co_await consul.async_session_destroy(second);
        co_await consul.async_kv_delete(pre + "/", kv_delete_options{}.with_recurse());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a status read refuses a .lock with other flags or one it cannot decode",
                 "[semaphore][status]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "a/.lock", "",
                                     kv_put_options{}.with_flags(lock_flag_value));
        semaphore on_lock{consul, p + "a", 2};
        auto [ec, st] = co_await on_lock.async_status(awaitable_tuple);
        CHECK(ec == errc::conflict);
        CHECK(st.holders.empty());

        co_await consul.async_kv_put(p + "b/.lock", "{not json",
                                     kv_put_options{}.with_flags(semaphore_flag_value));
        semaphore garbled{consul, p + "b", 2};
        auto [ec2, st2] = co_await garbled.async_status(awaitable_tuple);
        CHECK(ec2 == errc::bad_response);
        (void)st2;

        co_await consul.async_kv_delete(p, kv_delete_options{}.with_recurse());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a status read refuses another limit and says so as an acquire does",
                 "[semaphore][status]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "a/.lock", R"({"Limit":3,"Holders":{}})",
                                     kv_put_options{}.with_flags(semaphore_flag_value));
        diagnostics diag;
        semaphore two{consul, p + "a", 2, semaphore_options{}.with_diag(&diag)};
        auto [ec, st] = co_await two.async_status(awaitable_tuple);
        CHECK(ec == errc::limit_conflict);
        CHECK(diag.client_message == "semaphore limit conflict (lock: 3, local: 2)");
        (void)st;

        // With the default token, the thrown error says it.
        semaphore plain{consul, p + "a", 2};
        auto [thrown, text] = co_await thrown_by(plain.async_status());
        CHECK(thrown == errc::limit_conflict);
        CHECK_THAT(text, contains_text("semaphore limit conflict (lock: 3, local: 2)"));

        co_await consul.async_kv_delete(p, kv_delete_options{}.with_recurse());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a status read is one non-blocking request",
                 "[semaphore][status]") {
    auto log = std::make_shared<request_log>();
    auto cfg = server.client_config();
    cfg.observer = log;
    client observed{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        semaphore holder{consul, p + "one", 2};
        auto got = co_await holder.async_acquire(s);

        semaphore sem{observed, p + "one", 2};
        CHECK(log->endpoints.empty()); // (the object alone sends nothing)
        auto st = co_await sem.async_status();
        CHECK(st.holders.size() == 1);
        CHECK(log->endpoints == std::vector<std::string>{"kv_list"});
        CHECK(log->blocking == std::vector<bool>{false});

        co_await got.async_release();
        co_await holder.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE("with ACLs on, a status read needs read access to the whole prefix",
          "[acl][real-consul][semaphore][status]") {
    asio::io_context ioc;
    auto consul = acl_consul();
    if (!consul)
        return;
    const std::string p = "conclave-acl-test/" + random_uuid() + "/";
    const std::string prefix = p + "sem";
    const auto full = make_token(*consul, "conclave-status", minimal_rules(p));
    const auto lock_only = make_token(*consul, "conclave-status-lock-only",
                                      "key \"" + prefix + "/.lock\" { policy = \"read\" }\n");
    auto make_client = [&](std::string token) {
        client_config cfg;
        cfg.port = consul->http_port();
        cfg.token = std::move(token);
        return client{ioc.get_executor(), cfg};
    };
    auto body = [&]() -> asio::awaitable<void> {
        client app = make_client(full);
        auto s = co_await session::async_create(app, quick(10s));
        semaphore sem{app, prefix, 2, semaphore_options{}.with_value("w")};
        auto held = co_await sem.async_acquire(s);
        auto st = co_await sem.async_status();
        REQUIRE(st.holders.size() == 1);
        CHECK(st.holders.front().value == "w");
        CHECK(st.free_slots == 1);

        // Consul leaves the keys a token may not read out of a list, without an error: the
        // holder's contender key is not seen, so the holder looks dead.
        client partial = make_client(lock_only);
        semaphore seen_partly{partial, prefix, 2};
        auto blind = co_await seen_partly.async_status();
        CHECK(blind.holders.empty());
        CHECK(blind.free_slots == 2);
        CHECK(blind.lock_modify_index == st.lock_modify_index);

        client stranger = make_client(random_uuid());
        semaphore refused{stranger, prefix, 2};
        auto [code, text] = co_await thrown_by(refused.async_status());
        CHECK(code == errc::permission_denied);
        CHECK_THAT(text, contains_text("does not know the ACL token"));

        co_await held.async_release();
        co_await sem.async_destroy();
        co_await s.async_destroy();
        client root = make_client(acl_master_token);
        auto sessions = co_await root.async_session_list();
        auto keys = co_await root.async_kv_keys(p);
        CHECK(sessions.sessions.empty());
        CHECK(keys.keys.empty());
    };
    run(ioc, body(), 60s);
}
