// SPDX-License-Identifier: BSL-1.0
// fuzz_client_response: what the client does with the bytes a Consul agent sends back, with
// no socket. Those bytes come from the network, from whatever answers on the agent's address
// (a proxy, a load balancer, a wrong port, a compromised or buggy agent): the client must
// turn any of them into a result or an error, never a crash, a hang or a leak.
//
// Input: byte 0 picks the request the response answers (low 7 bits: which decoder reads the
// body; high bit: whether a token was sent); byte 1 the size of each read (0: everything at
// once), as a socket delivers the stream in pieces; the rest is the connection's byte
// stream. It is read as connection.cpp reads it, through the library's response_reader (its
// response_parser fed from a buffer that keeps what a response left over), response after
// response while the connection stays reusable, as on a keep-alive connection. Each reply
// goes to the decode step of the endpoint whose request it answers (lib/consul/endpoints/),
// the code the client runs: with a status the endpoint refuses it reaches status_error()
// (and missing_permission() for a 403). Decoded KV entries and semaphore records must
// survive encoding and decoding again unchanged.
#include "codec/json.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/endpoints/session.hpp"
#include "http/response_parser.hpp"
#include "http/response_reader.hpp"
#include "recipes/semaphore/semaphore_record.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace {

using namespace conclave;
namespace json = boost::json;
using detail::api_call;
using detail::http::response;
using detail::http::response_parser;
using detail::http::response_reader;

// The client's limits (client_config::max_entry_response_body, max_response_body), made
// small so that inputs of a few KiB reach them.
constexpr std::size_t entry_body_limit = 2048;
constexpr std::size_t list_body_limit = 8192;
// More responses than this on one connection add nothing but time.
constexpr int max_responses = 4;
// FUZZ_VERBOSE=1: print what each response became (to look at seeds).
const bool verbose = std::getenv("FUZZ_VERBOSE") != nullptr;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_client_response: %s\n", what);
    std::abort();
}

// The connection's bytes, handed out `step` at a time (a socket's reads).
struct byte_stream {
    const std::uint8_t* data;
    std::size_t size;
    std::size_t step;

    // Copies one read's bytes into `space`: how many.
    std::size_t read(boost::asio::mutable_buffer space) {
        const std::size_t n = std::min({size, space.size(), step == 0 ? size : step});
        std::memcpy(space.data(), data, n);
        data += n;
        size -= n;
        return n;
    }
};

// As the connection reads a response, with the stream's end as the socket's EOF.
error_code read_response(response_parser& parser, response_reader& reader, byte_stream& in) {
    for (;;) {
        const auto step = reader.next(parser);
        if (step.done)
            return step.ec;
        if (in.size == 0)
            return reader.end_of_stream(parser);
        reader.commit(in.read(step.space));
    }
}

enum class reply_kind {
    kv_get,  // GET /v1/kv/<key>: one entry
    kv_list, // GET /v1/kv/<prefix>?recurse
    kv_keys, // GET /v1/kv/<prefix>?keys
    kv_raw,  // GET /v1/kv/<key>?raw
    write,   // PUT /v1/kv/<key>: true or false (DELETE decodes the same)
    session_create,
    session_list, // GET /v1/session/info/<id> (list and node decode the same)
    txn,
    leader,
    agent_self,
    semaphore, // a semaphore's KV list and its .lock record (recipes/semaphore)
    session_renew,
    session_destroy,
    count
};

// Calls f with the endpoint that sends the request a reply of `kind` answers.
template <class F>
void with_endpoint(reply_kind kind, F f) {
    namespace ep = detail::endpoint;
    switch (kind) {
    case reply_kind::kv_get:
        return f(ep::kv_get{"service/web app/leader", {}});
    case reply_kind::kv_list:
    case reply_kind::semaphore:
        return f(ep::kv_list{"service/web/", {}});
    case reply_kind::kv_keys:
        return f(ep::kv_keys{"service/", kv_keys_options{}.with_separator("/")});
    case reply_kind::kv_raw:
        return f(ep::kv_get_raw{"service/web app/leader", {}});
    case reply_kind::write:
        return f(ep::kv_put{"service/web/.lock", "", {}});
    case reply_kind::session_create:
        return f(ep::session_create{{}});
    case reply_kind::session_list:
        return f(ep::session_info{"adf4238a-882b-9ddc-4a9d-5b6758e4159e", {}});
    case reply_kind::txn:
        return f(ep::txn{{txn_op::get("service/web/.lock")}, {}});
    case reply_kind::leader:
        return f(ep::status_leader{{}});
    case reply_kind::agent_self:
    case reply_kind::count:
        return f(ep::agent_self{{}});
    case reply_kind::session_renew:
        return f(ep::session_renew{"adf4238a-882b-9ddc-4a9d-5b6758e4159e", {}});
    case reply_kind::session_destroy:
        return f(ep::session_destroy{"adf4238a-882b-9ddc-4a9d-5b6758e4159e", {}});
    }
}

// The request the endpoint of `kind` sends (its body limit depends on it).
api_call request_for(reply_kind kind) {
    api_call call;
    with_endpoint(kind, [&](auto e) {
        if (e.build(call))
            fail("the fuzzer's own request was refused");
    });
    return call;
}

// Entries, as the dev agent would write them, must read back the same.
void check_round_trip(const std::vector<kv_entry>& entries) {
    json::array a;
    for (const auto& e : entries)
        a.emplace_back(codec::kv_entry_to_json(e));
    std::vector<kv_entry> again;
    if (!codec::parse_kv_entries(json::serialize(a), again) || again != entries)
        fail("KV entries changed through kv_entry_to_json and parse_kv_entries");
}

// The semaphore's view of a KV list: each `.lock` record decodes, prunes against the list
// and survives encoding and decoding again.
void check_semaphore(const std::vector<kv_entry>& entries) {
    for (const auto& e : entries) {
        if (!e.key.ends_with("/.lock"))
            continue;
        auto record = detail::semaphore_record::decode(e.value, 3);
        if (!record)
            continue;
        record->prune(entries);
        const auto again = detail::semaphore_record::decode(record->encode(), 0);
        if (!again || again->limit != record->limit || again->holders != record->holders)
            fail("semaphore record changed through encode and decode");
    }
}

// What the endpoint of `kind` makes of a reply (its decode, with the diagnostics a caller
// would get), and what its result must survive. True when it is a result, not an error.
bool decode(reply_kind kind, const api_call& request, response& reply) {
    diagnostics diag;
    api_call call = request;
    call.diag = &diag;
    bool ok = false;
    with_endpoint(kind, [&](auto e) {
        auto [ec, result] = e.decode(call, reply);
        if ((ok = !ec)) {
            using result_type = decltype(result);
            if constexpr (std::is_same_v<result_type, kv_get_result>) {
                if (result.entry)
                    check_round_trip({*result.entry});
            } else if constexpr (std::is_same_v<result_type, kv_list_result>) {
                check_round_trip(result.entries);
                if (kind == reply_kind::semaphore)
                    check_semaphore(result.entries);
            } else if constexpr (std::is_same_v<result_type, txn_result>) {
                check_round_trip(result.results);
            }
        }
    });
    return ok;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2)
        return 0;
    const auto kind = static_cast<reply_kind>((data[0] & 0x7f) % unsigned(reply_kind::count));
    const bool token_sent = (data[0] & 0x80) != 0;
    byte_stream in{data + 2, size - 2, data[1]};
    api_call call = request_for(kind);
    call.token_sent = token_sent;
    const std::size_t body_limit = call.one_entry ? entry_body_limit : list_body_limit;

    response_reader reader; // the connection's, kept from one response to the next
    for (int i = 0; i < max_responses; ++i) {
        response reply;
        response_parser parser{reply, body_limit};
        if (read_response(parser, reader, in))
            break; // the connection is closed; the call fails with the error
        const bool ok = decode(kind, call, reply);
        if (verbose)
            std::fprintf(stderr, "kind %d: %u, %zu body bytes, index %llu -> %s\n", int(kind),
                         reply.status, reply.body.size(),
                         static_cast<unsigned long long>(reply.meta.index),
                         ok ? "result" : "error");
        if (!parser.keep_alive() || parser.need_eof())
            break;
    }
    return 0;
}
