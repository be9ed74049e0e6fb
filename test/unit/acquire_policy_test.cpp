// SPDX-License-Identifier: BSL-1.0
// The lock acquire decisions: refusal classes, key verdicts, lock-delay backoff.
#include "recipes/common/acquire_policy.hpp"
#include "support/catch.hpp"

using namespace conclave;
using namespace conclave::detail;
using namespace std::chrono_literals;

namespace {
std::vector<txn_error> errors(std::initializer_list<const char*> texts) {
    std::vector<txn_error> out;
    std::size_t i = 0;
    for (const char* t : texts)
        out.push_back({i++, t});
    return out;
}
} // namespace

TEST_CASE("Consul's txn errors are classified", "[acquire]") {
    CHECK(classify_refusal(errors({"failed to lock key \"k\" due to lock delay"})) ==
          refusal::lock_delay);
    CHECK(classify_refusal(errors({"failed to lock key \"k\", lock is already held"})) ==
          refusal::held);
    CHECK(classify_refusal(errors({"invalid session \"0e5d...\""})) == refusal::session_gone);
    CHECK(classify_refusal(
              errors({"failed index check for key \"k\", current modify index 9 != 7"})) ==
          refusal::stale);
    CHECK(classify_refusal(errors({"key \"k\" exists"})) == refusal::stale);
    CHECK(classify_refusal(errors({"failed to check index, key \"k\" doesn't exist"})) ==
          refusal::stale);
    CHECK(classify_refusal(errors({"something new"})) == refusal::other);
    // Lock-delay wins over the index check failing in the same transaction.
    CHECK(classify_refusal(
              errors({"key \"k\" exists", "failed to lock key \"k\" due to lock delay"})) ==
          refusal::lock_delay);
}

TEST_CASE("a key is judged by its flags and holder", "[acquire]") {
    kv_entry e;
    e.flags = lock_flag_value;
    CHECK(judge_key(nullptr, "s", lock_flag_value) == key_verdict::free);
    CHECK(judge_key(&e, "s", lock_flag_value) == key_verdict::free);
    e.session = "s";
    CHECK(judge_key(&e, "s", lock_flag_value) == key_verdict::ours);
    e.session = "t";
    CHECK(judge_key(&e, "s", lock_flag_value) == key_verdict::held_by_other);
    e.flags = semaphore_flag_value;
    CHECK(judge_key(&e, "s", lock_flag_value) == key_verdict::conflict);
    e.flags = 0;
    e.session.clear();
    CHECK(judge_key(&e, "s", lock_flag_value) == key_verdict::conflict);
}

TEST_CASE("lock-delay waits double from 25 ms up to the cap", "[acquire]") {
    lock_delay_backoff b{200ms};
    CHECK(b.next() == 25ms);
    CHECK(b.next() == 50ms);
    CHECK(b.next() == 100ms);
    CHECK(b.next() == 200ms);
    CHECK(b.next() == 200ms);
    b.reset();
    CHECK(b.next() == 25ms);
}
