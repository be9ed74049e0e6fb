// SPDX-License-Identifier: BSL-1.0
// run_cas: read, decide, write by check-and-set; again after a pause on a lost race.
#include "consul/endpoint.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "recipes/common/cas_race_backoff.hpp"
#include "recipes/common/cas_write.hpp"
#include "recipes/common/deadline.hpp"

namespace conclave::detail {

namespace {

using clock = std::chrono::steady_clock;

// Consul answered the write with a refusal: it was not applied. Any other failure (no
// reply: cancelled, timed out, connection lost; a 500, which a Raft apply that timed out
// also gives) leaves its outcome unknown.
bool refused_unapplied(const error_code& ec) {
    return ec == errc::bad_request || ec == errc::permission_denied || ec == errc::not_found ||
           ec == errc::request_too_large || ec == errc::rate_limited ||
           ec == errc::invalid_argument || ec == errc::pool_closed;
}

// The write `step` says, by check-and-set on what was read: whether it was applied (false:
// another writer came first).
asio::awaitable<std::pair<error_code, bool>> write_step(client& c, const std::string& key,
                                                        const std::optional<kv_entry>& read,
                                                        cas_step step, clock::time_point until,
                                                        diagnostics& said) {
    // Create-only when the key is missing (cas=0), else only over what was read.
    const std::uint64_t cas = read ? read->modify_index : 0;
    if (step.act == cas_step::action::remove) {
        auto del = endpoint::kv_delete{key, kv_delete_options{}.with_cas(cas).with_diag(&said)};
        co_return co_await call(c, std::move(del), until);
    }
    auto put =
        endpoint::kv_put{key, std::move(step.value),
                         kv_put_options{}.with_cas(cas).with_flags(step.flags).with_diag(&said)};
    co_return co_await call(c, std::move(put), until);
}

asio::awaitable<error_code> cas_loop(client c, const std::string& key,
                                     std::chrono::milliseconds budget, const cas_op& op,
                                     diagnostics& said) {
    if (budget.count() <= 0)
        budget = c.config().request_timeout;
    const auto until = clock::now() + budget;
    cas_race_backoff race;
    for (;;) {
        said.clear();
        auto [read_error, read] =
            co_await call(c, endpoint::kv_get{key, query_options{}.with_diag(&said)}, until);
        if (read_error) {
            describe_failure(said, op.what + ": reading the key failed, nothing written");
            co_return read_error;
        }
        auto step = op.decide(read.entry);
        if (step.act == cas_step::action::fail) {
            said.client_message = std::move(step.why);
            co_return step.ec;
        }
        if (step.act == cas_step::action::finish ||
            (step.act == cas_step::action::remove && !read.entry))
            co_return error_code{};
        auto [write_error, written] =
            co_await write_step(c, key, read.entry, std::move(step), until, said);
        if (write_error) {
            std::string outcome;
            if (refused_unapplied(write_error))
                outcome = ": Consul refused the write, nothing written";
            else
                outcome = std::string{said.http_status == 0 ? ": the write got no answer"
                                                            : ": Consul's error does not say"} +
                          ", so its outcome is unknown: it may have been applied (read the "
                          "key to know)";
            describe_failure(said, op.what + outcome);
            co_return write_error;
        }
        if (written)
            co_return error_code{};
        // Another writer came between the read and the write: read again, after a pause.
        if (clock::now() >= until) {
            said.client_message = op.what + ": other writers kept changing the key for the "
                                            "whole budget; nothing written";
            co_return make_error_code(errc::timeout);
        }
        co_await sleep_for(race.next(), until);
    }
}

} // namespace

void describe_failure(diagnostics& said, std::string ours) {
    if (!said.client_message.empty())
        ours += "; " + said.client_message;
    said.client_message = std::move(ours);
}

// An exception out of the loop (cancellation seen by a co_await between requests) comes
// before any write that could have been applied: the requests themselves complete with
// their errors as values.
asio::awaitable<error_code> run_cas(client c, std::string key, std::chrono::milliseconds budget,
                                    cas_op op, diagnostics* diag) {
    diagnostics said;
    error_code ec;
    try {
        ec = co_await cas_loop(std::move(c), key, budget, op, said);
    } catch (...) {
        ec = error_from_exception(std::current_exception());
        said.clear();
        said.client_message = op.what +
                              (ec == asio::error::operation_aborted ? ": cancelled" : ": failed") +
                              " before its write; nothing written";
    }
    if (diag)
        *diag = ec ? said : diagnostics{};
    co_return ec;
}

} // namespace conclave::detail
