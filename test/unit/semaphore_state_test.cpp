// SPDX-License-Identifier: BSL-1.0
// The semaphore without a server: what the prefix says (interpret), the status it reports
// (status_of), who joins a transaction on `.lock` (next_in_line), a handoff's verdicts
// (handoff_batch), one slot per session (semaphore_hub), and the record's edge cases
// (semaphore_record_test.cpp has the common ones). A client whose io_context never runs: no
// request is ever sent.
#include "recipes/semaphore/semaphore_handoff.hpp"
#include "recipes/semaphore/semaphore_record.hpp"
#include "recipes/semaphore/semaphore_state.hpp"
#include "support/catch.hpp"

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <memory>

using namespace conclave;
using namespace conclave::detail;
using phase = semaphore_waiter::phase;
using holders_t = std::map<std::string, std::uint32_t>;

namespace {

using clock_type = std::chrono::steady_clock;

const std::string s_a = "0b6b2e8c-5f5a-4c41-9d1e-1c3a9f0e7a10";
const std::string s_b = "1a2b3c4d-1111-2222-3333-444455556666";
const std::string s_c = "9f2c1d3e-0000-4abc-8def-0123456789ab";

kv_entry entry(std::string key, std::string session, std::string value = "",
               std::uint64_t flags = semaphore_flag_value, std::uint64_t index = 10) {
    kv_entry e;
    e.key = std::move(key);
    e.session = std::move(session);
    e.value = std::move(value);
    e.flags = flags;
    e.modify_index = index;
    return e;
}

struct fixture {
    asio::io_context ioc;
    client consul{ioc.get_executor()};
    std::shared_ptr<semaphore_state> sem;

    explicit fixture(std::uint32_t limit = 2, std::string prefix = "p")
        : sem(std::make_shared<semaphore_state>(consul, std::move(prefix), limit,
                                                semaphore_options{})) {}

    std::shared_ptr<session_state> session(std::string id) {
        auto s = std::make_shared<session_state>(consul, std::move(id), session_config{},
                                                 clock_type::now());
        s->gone_on_server = true; // (nothing to destroy in the background)
        return s;
    }

    // A waiter in the hub's queue, its contender key written unless said otherwise.
    std::shared_ptr<semaphore_waiter> wait(std::shared_ptr<session_state> s,
                                           std::uint32_t limit = 2, bool enqueued = true) {
        auto w = std::make_shared<semaphore_waiter>(std::move(s), limit);
        w->enqueued = enqueued;
        sem->hub->queue.push_back(w);
        return w;
    }

    semaphore_reading read(const kv_entry* lock, const std::vector<kv_entry>& entries,
                           diagnostics* diag = nullptr) {
        return interpret(*sem, lock, entries, diag);
    }
};

std::vector<std::string> sessions_of(const handoff_batch::waiters& ws) {
    std::vector<std::string> out;
    for (const auto& w : ws)
        out.push_back(w->session->id);
    return out;
}

} // namespace

// ---- interpret: what the prefix says ---------------------------------------------------

TEST_CASE("semaphore reading: no .lock yet is a fresh record with the object's limit",
          "[semaphore]") {
    fixture f{3};
    const auto r = f.read(nullptr, {});
    CHECK_FALSE(r.ec);
    CHECK(r.record.limit == 3);
    CHECK(r.record.holders.empty());
    CHECK(r.lock_modify_index == 0);
}

TEST_CASE("semaphore reading: .lock with other flags is a conflict", "[semaphore]") {
    fixture f;
    const auto lock = entry("p/.lock", "", R"({"Limit":2,"Holders":{}})", lock_flag_value);
    CHECK(f.read(&lock, {lock}).ec == errc::conflict);
}

TEST_CASE("semaphore reading: a .lock that does not decode is a bad response", "[semaphore]") {
    fixture f;
    const auto lock = entry("p/.lock", "", R"({"Limit":2,"Holders":[]})");
    CHECK(f.read(&lock, {lock}).ec == errc::bad_response);
}

TEST_CASE("semaphore reading: another limit is a limit conflict, said in the diagnostics",
          "[semaphore]") {
    fixture f{2};
    const auto lock = entry("p/.lock", "", R"({"Limit":3,"Holders":{}})");
    diagnostics diag;
    CHECK(f.read(&lock, {lock}, &diag).ec == errc::limit_conflict);
    CHECK(diag.client_message == "semaphore limit conflict (lock: 3, local: 2)");
    CHECK(f.read(&lock, {lock}).ec == errc::limit_conflict); // (without diagnostics too)
}

TEST_CASE("semaphore reading: only holders whose session holds a key under the prefix count",
          "[semaphore]") {
    fixture f{3};
    const auto lock = entry("p/.lock", "",
                            R"({"Limit":3,"Holders":{")" + s_a + R"(":true,")" + s_b +
                                R"(":true,")" + s_c + R"(":true}})",
                            semaphore_flag_value, 77);
    const std::vector<kv_entry> entries{
        lock, entry("p/" + s_a, s_a), // its contender key
        entry("p/other", s_b),        // any key its session holds keeps it alive (Go's rule)
        entry("p/" + s_c, "")};       // released: its session is gone
    const auto r = f.read(&lock, entries);
    CHECK_FALSE(r.ec);
    CHECK(r.lock_modify_index == 77);
    CHECK(r.record.holders == holders_t{{s_a, 1}, {s_b, 1}});
}

// ---- status_of: semaphore::async_status's answer ----------------------------------------

TEST_CASE("semaphore status: the live holders with their contender keys' values", "[semaphore]") {
    fixture f{3};
    const auto lock = entry(
        "p/.lock", "", R"({"Limit":3,"Holders":{")" + s_a + R"(":true,")" + s_b + R"(":true}})",
        semaphore_flag_value, 41);
    const std::vector<kv_entry> entries{lock, entry("p/" + s_a, s_a, "worker-1"),
                                        entry("p/other", s_b, "not a contender key")};
    const auto r = f.read(&lock, entries);
    REQUIRE_FALSE(r.ec);
    const auto st = status_of(3, "p", r, entries);
    CHECK(st.limit == 3);
    CHECK(st.lock_modify_index == 41);
    CHECK(st.free_slots == 1);
    REQUIRE(st.holders.size() == 2);
    CHECK(st.holders[0] == semaphore_holder{s_a, std::string("worker-1")});
    // Alive through another key, without a contender key of its own: no value.
    CHECK(st.holders[1] == semaphore_holder{s_b, std::nullopt});
}

TEST_CASE("semaphore status: more holders than slots leaves none free, never a negative count",
          "[semaphore]") {
    semaphore_reading r;
    r.record.limit = 1;
    r.record.holders = {{s_a, 1}, {s_b, 1}};
    const std::vector<kv_entry> entries{entry("p/" + s_a, s_a), entry("p/" + s_b, s_b)};
    const auto st = status_of(1, "p", r, entries);
    CHECK(st.holders.size() == 2);
    CHECK(st.free_slots == 0);
    r.record.holders.clear();
    CHECK(status_of(1, "p", r, {}).free_slots == 1);
}

TEST_CASE("semaphore status: values come from keys directly under the prefix, joined as Go "
          "joins",
          "[semaphore]") {
    semaphore_reading r;
    r.record.limit = 2;
    r.record.holders = {{s_a, 1}};
    const std::vector<kv_entry> entries{entry("p2/" + s_a, s_a, "of prefix p2"),
                                        entry("p/" + s_a, s_a, "mine")};
    const auto st = status_of(2, "p/", r, entries); // (a trailing slash)
    REQUIRE(st.holders.size() == 1);
    CHECK(st.holders[0].value == std::string("mine"));
}

// ---- next_in_line: who joins a transaction on .lock -------------------------------------

TEST_CASE("semaphore handoff: waiters join in arrival order, as many as there are slots",
          "[semaphore]") {
    fixture f;
    auto w1 = f.wait(f.session(s_a));
    auto w2 = f.wait(f.session(s_b));
    auto w3 = f.wait(f.session(s_c));
    const semaphore_record empty;
    CHECK(sessions_of(next_in_line(*f.sem->hub, 2, empty, "", 2)) ==
          std::vector<std::string>{s_a, s_b});
    CHECK(sessions_of(next_in_line(*f.sem->hub, 2, empty, "", 5)) ==
          std::vector<std::string>{s_a, s_b, s_c});
    CHECK(next_in_line(*f.sem->hub, 2, empty, "", 0).empty());
}

TEST_CASE("semaphore handoff: a waiter asking for more slots than are left keeps those behind "
          "it waiting",
          "[semaphore]") {
    fixture f;
    auto one = f.wait(f.session(s_a), 4);
    auto three = f.wait(f.session(s_b), 4);
    three->slots = 3;
    auto small = f.wait(f.session(s_c), 4);
    const semaphore_record empty;
    // 2 slots: the first takes one, the next asks for 3, and the one behind it does not
    // overtake it.
    CHECK(sessions_of(next_in_line(*f.sem->hub, 4, empty, "", 2)) == std::vector<std::string>{s_a});
    CHECK(sessions_of(next_in_line(*f.sem->hub, 4, empty, "", 4)) ==
          std::vector<std::string>{s_a, s_b});
    CHECK(sessions_of(next_in_line(*f.sem->hub, 4, empty, "", 5)) ==
          std::vector<std::string>{s_a, s_b, s_c});
    CHECK(f.sem->hub->slots_asked(s_b) == 3);
    CHECK(f.sem->hub->slots_asked("elsewhere") == 1);
}

TEST_CASE("semaphore handoff: a waiter asking for more than the limit holds nobody up",
          "[semaphore]") {
    // (A resizable semaphore's waiter, limit 0, after a shrink: refused at the front.)
    fixture f;
    auto big = f.wait(f.session(s_a), 0);
    big->slots = 5;
    auto small = f.wait(f.session(s_b), 0);
    CHECK(sessions_of(next_in_line(*f.sem->hub, 4, semaphore_record{}, "", 4)) ==
          std::vector<std::string>{s_b});
}

TEST_CASE("semaphore handoff: only waiters that can be handed a slot now join", "[semaphore]") {
    fixture f;
    auto other_limit = f.wait(f.session("l"), 3);        // another limit
    auto not_written = f.wait(f.session("n"), 2, false); // no contender key
    auto leaving = f.wait(f.session("g"));               // giving up
    auto handing = f.wait(f.session("h"));               // another txn adds it
    auto lost = f.wait(f.session("x"));                  // session lost
    auto self = f.wait(f.session("me"));                 // the sender
    auto holder = f.wait(f.session("in"));               // already a holder
    auto clearing = f.wait(f.session("c"));              // being taken out
    auto fine = f.wait(f.session("ok"));                 // joins
    leaving->leaving = true;
    handing->state = phase::handing;
    lost->session->mark_lost(make_error_code(errc::session_expired));
    f.sem->hub->clearing["c"] = 1;
    semaphore_record record;
    record.holders = {{"in", 1}};
    CHECK(sessions_of(next_in_line(*f.sem->hub, 2, record, "me", 9)) ==
          std::vector<std::string>{"ok"});
}

TEST_CASE("semaphore handoff: one waiter per session joins (a session holds one slot)",
          "[semaphore]") {
    fixture f;
    auto s = f.session(s_a);
    auto first = f.wait(s);
    auto second = f.wait(s);
    auto other = f.wait(f.session(s_b));
    const auto batch = next_in_line(*f.sem->hub, 2, semaphore_record{}, "", 3);
    REQUIRE(batch.size() == 2);
    CHECK(batch[0] == first);
    CHECK(batch[1] == other);
    CHECK(second->can_be_handed(clock_type::now())); // (it could, but its session is in)
}

TEST_CASE("semaphore handoff: a session with a live local permit waits, unless its permit is "
          "the one released",
          "[semaphore]") {
    fixture f;
    auto s = f.session(s_a);
    auto permit = std::make_shared<permit_state>(f.sem, s, fencing_token{"p/.lock", s_a, 0, 5}, 1);
    f.sem->hub->local_permits[s_a] = permit;
    auto w = f.wait(s);
    CHECK(f.sem->hub->held_here_by(s_a));
    CHECK(next_in_line(*f.sem->hub, 2, semaphore_record{}, "", 1).empty());
    // The release of that permit hands its slot to the waiter of the same session.
    CHECK(next_in_line(*f.sem->hub, 2, semaphore_record{}, "", 1, s_a).size() == 1);
    // Released: the slot is free for it.
    permit->mark_released();
    CHECK_FALSE(f.sem->hub->held_here_by(s_a));
    CHECK(next_in_line(*f.sem->hub, 2, semaphore_record{}, "", 1) == handoff_batch::waiters{w});
}

// ---- handoff_batch: a transaction's verdict for the waiters it adds ----------------------

TEST_CASE("semaphore handoff: a committed batch grants its members at .lock's index",
          "[semaphore]") {
    fixture f;
    auto w1 = f.wait(f.session(s_a));
    auto w2 = f.wait(f.session(s_b));
    auto& hub = *f.sem->hub;
    {
        handoff_batch batch{f.sem->hub, {w1, w2}, 2, std::chrono::milliseconds{100}};
        CHECK(hub.attempts_in_flight == 1);
        CHECK(w1->state == phase::handing);
        CHECK(hub.granting_here(s_a));
        CHECK(hub.slot_busy(s_b)); // nobody else adds them meanwhile
        batch.granted(88);
    }
    CHECK(hub.attempts_in_flight == 0);
    for (const auto& w : {w1, w2}) {
        CHECK(w->state == phase::granted);
        CHECK(w->granted_index == 88);
        CHECK_FALSE(w->was_handed);
    }
}

TEST_CASE("semaphore handoff: a refused batch leaves its members waiting, sure of it",
          "[semaphore]") {
    fixture f;
    auto w = f.wait(f.session(s_a));
    {
        handoff_batch batch{f.sem->hub, {w}, 2, std::chrono::milliseconds{100}};
        batch.refused();
    }
    CHECK(w->state == phase::waiting);
    CHECK_FALSE(w->was_handed);
    CHECK(w->can_be_handed(clock_type::now())); // it may join the next one
    CHECK_FALSE(f.sem->hub->granting_here(s_a));
}

TEST_CASE("semaphore handoff: a batch gone without a verdict leaves its members unsure",
          "[semaphore]") {
    fixture f;
    auto w = f.wait(f.session(s_a));
    {
        handoff_batch batch{f.sem->hub, {w}, 2, std::chrono::milliseconds{100}};
    } // (a transport error, a cancellation)
    CHECK(w->state == phase::waiting);
    CHECK(w->was_handed); // its next read, or its cleanup, settles whether it holds a slot
    CHECK(f.sem->hub->attempts_in_flight == 0);
}

// ---- one slot per session ------------------------------------------------------------

TEST_CASE("semaphore hub: a session being cleared is busy while any cleanup of it runs",
          "[semaphore]") {
    fixture f;
    auto& hub = *f.sem->hub;
    CHECK_FALSE(hub.slot_busy(s_a));
    {
        const clearing_scope first{hub, s_a};
        {
            const clearing_scope second{hub, s_a};
            CHECK(hub.clearing.at(s_a) == 2);
        }
        CHECK(hub.slot_busy(s_a)); // the first still runs
        const clearing_scope nobody{hub, ""};
        CHECK(hub.clearing.size() == 1); // (an empty session marks nothing)
    }
    CHECK_FALSE(hub.slot_busy(s_a));
    CHECK(hub.clearing.empty());
}

TEST_CASE("semaphore hub: a permit dropped unreleased lets its session's waiters take the slot",
          "[semaphore]") {
    fixture f;
    auto s = f.session(s_a);
    auto w = f.wait(s);
    auto other = f.wait(f.session(s_b));
    {
        auto permit =
            std::make_shared<permit_state>(f.sem, s, fencing_token{"p/.lock", s_a, 0, 5}, 1);
        f.sem->hub->local_permits[s_a] = permit;
        CHECK(f.sem->hub->slot_busy(s_a));
    } // its last handle dropped, neither released nor lost
    CHECK(w->recheck);
    CHECK_FALSE(other->recheck);
    CHECK(f.sem->hub->local_permits.count(s_a) == 0);
    CHECK_FALSE(f.sem->hub->slot_busy(s_a));
    CHECK(f.sem->hub->waits_here(s_a));
}

TEST_CASE("semaphore hub: a local write before the prefix was read patches nothing",
          "[semaphore]") {
    fixture f;
    auto& hub = *f.sem->hub;
    REQUIRE_FALSE(hub.known());
    hub.saw_write(entry("p/.lock", "", R"({"Limit":2,"Holders":{}})"), 0, {s_a}, "");
    CHECK_FALSE(hub.known()); // the query brings the news
    CHECK(hub.entries().empty());
    CHECK(hub.lock_entry() == nullptr);
    CHECK(hub.lock_key == "p/.lock");
    CHECK(hub.contender_key(s_a) == "p/" + s_a);
}

// ---- the record's edge cases -------------------------------------------------------------

TEST_CASE("semaphore record: only a JSON object with an object of holders decodes", "[semaphore]") {
    CHECK_FALSE(semaphore_record::decode("[]", 1));
    CHECK_FALSE(semaphore_record::decode("3", 1));
    CHECK_FALSE(semaphore_record::decode(R"({"Limit":1,"Holders":["a"]})", 1));
    CHECK_FALSE(semaphore_record::decode(R"({"Limit":1.5})", 1));
    // Missing fields are Go's zero values, not the default limit (only an empty value is
    // a fresh record).
    const auto r = semaphore_record::decode("{}", 4);
    REQUIRE(r);
    CHECK(r->limit == 0);
    CHECK(r->holders.empty());
    const auto n = semaphore_record::decode(R"({"Limit":null})", 4);
    REQUIRE(n);
    CHECK(n->limit == 0);
}

TEST_CASE("semaphore record: holders are escaped on the way out and read back", "[semaphore]") {
    semaphore_record r;
    r.limit = 2;
    r.holders = {{"a\"b", 1}, {"c\\d", 1}};
    const auto text = r.encode();
    CHECK(text == R"({"Limit":2,"Holders":{"a\"b":true,"c\\d":true}})");
    const auto back = semaphore_record::decode(text, 9);
    REQUIRE(back);
    CHECK(back->limit == 2);
    CHECK(back->holders == r.holders);
}

TEST_CASE("semaphore record: with no live key under the prefix every holder is pruned",
          "[semaphore]") {
    semaphore_record r;
    r.holders = {{s_a, 1}, {s_b, 1}};
    const std::vector<kv_entry> released{entry("p/" + s_a, ""), entry("p/.lock", "")};
    CHECK(r.prune(released) == 2);
    CHECK(r.holders.empty());
    CHECK(r.prune({}) == 0);
}
