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
// response while the connection stays reusable, as on a keep-alive connection. Each body
// goes to the decoder the client's endpoint calls (lib/consul/endpoints_*.cpp): codec's KV,
// session and txn parsers and the semaphore record; a status the endpoint refuses goes to
// status_error() (and missing_permission() for a 403). Decoded KV entries and semaphore
// records must survive encoding and decoding again unchanged.
#include "codec/json.hpp"
#include "consul/client_impl.hpp"
#include "http/response_parser.hpp"
#include "http/response_reader.hpp"
#include "recipes/semaphore/semaphore_record.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using namespace conclave;
namespace bhttp = boost::beast::http;
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
    write,   // PUT/DELETE /v1/kv, PUT /v1/session/destroy: true or false
    session_create,
    session_list, // /v1/session/info, list, node, renew
    txn,
    leader,
    agent_self,
    semaphore, // a semaphore's KV list and its .lock record (recipes/semaphore)
    count
};

api_call call_for(reply_kind kind, bool token_sent) {
    api_call call;
    call.token_sent = token_sent;
    switch (kind) {
    case reply_kind::kv_get:
    case reply_kind::kv_raw:
        call.path = "/v1/kv/service/web%20app/leader";
        call.one_entry = true;
        break;
    case reply_kind::kv_list:
    case reply_kind::semaphore:
        call.path = "/v1/kv/service/web/";
        call.flag("recurse");
        break;
    case reply_kind::kv_keys:
        call.path = "/v1/kv/service/";
        call.flag("keys");
        call.param("separator", "/");
        break;
    case reply_kind::write:
        call.method = bhttp::verb::put;
        call.path = "/v1/kv/service/web/.lock";
        call.one_entry = true;
        break;
    case reply_kind::session_create:
        call.method = bhttp::verb::put;
        call.path = "/v1/session/create";
        call.one_entry = true;
        break;
    case reply_kind::session_list:
        call.path = "/v1/session/info/adf4238a-882b-9ddc-4a9d-5b6758e4159e";
        call.one_entry = true;
        break;
    case reply_kind::txn:
        call.method = bhttp::verb::put;
        call.path = "/v1/txn";
        break;
    case reply_kind::leader:
        call.path = "/v1/status/leader";
        call.one_entry = true;
        break;
    case reply_kind::agent_self:
    case reply_kind::count:
        call.path = "/v1/agent/self";
        call.one_entry = true;
        break;
    }
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

// endpoints_session.cpp's parse_sessions() (in an unnamed namespace there).
bool parse_sessions(const std::string& body, std::vector<session_entry>& out) {
    error_code ec;
    unsigned char scratch[codec::parse_scratch_size];
    json::monotonic_resource mr(scratch, sizeof scratch);
    auto v = json::parse(body, ec, &mr);
    if (ec)
        return false;
    if (v.is_null())
        return true;
    if (!v.is_array())
        return false;
    for (const auto& item : v.get_array()) {
        session_entry s;
        if (!codec::session_entry_from_json(item, s))
            return false;
        out.push_back(std::move(s));
    }
    return true;
}

// What the endpoint does with a reply (the decode steps of endpoints_*.cpp; the JSON-only
// ones of status_leader, agent_self, session_create and kv_keys are repeated here).
// True when the endpoint would return a result (not an error).
bool decode(reply_kind kind, const api_call& call, const response& reply) {
    diagnostics diag;
    api_call with_diag = call;
    with_diag.diag = &diag;
    const bool not_found_ok = kind == reply_kind::kv_get || kind == reply_kind::kv_list ||
                              kind == reply_kind::kv_keys || kind == reply_kind::kv_raw ||
                              kind == reply_kind::semaphore;
    if (reply.status == 404 && not_found_ok)
        return true;
    if (reply.status != 200 && !(kind == reply_kind::txn && reply.status == 409)) {
        detail::status_error(with_diag, reply);
        return false;
    }
    const std::string& body = reply.body;
    error_code ec;
    bool ok = false;
    switch (kind) {
    case reply_kind::kv_get:
    case reply_kind::kv_list: {
        std::vector<kv_entry> entries;
        ok = codec::parse_kv_entries(body, entries) &&
             (kind == reply_kind::kv_list || entries.size() == 1);
        if (ok)
            check_round_trip(entries);
        break;
    }
    case reply_kind::kv_keys: {
        auto v = json::parse(body, ec);
        ok = !ec && v.is_array();
        if (ok) {
            std::vector<std::string> keys;
            for (const auto& k : v.get_array())
                if ((ok = k.is_string()))
                    keys.emplace_back(k.get_string());
                else
                    break;
        }
        break;
    }
    case reply_kind::kv_raw:
        ok = true; // the body is the value
        break;
    case reply_kind::write: {
        std::string_view b = body;
        while (!b.empty() && (b.back() == '\n' || b.back() == ' '))
            b.remove_suffix(1);
        ok = b == "true" || b == "false";
        if (!ok)
            detail::parse_error(with_diag, "expected true or false");
        break;
    }
    case reply_kind::session_create: {
        auto v = json::parse(body, ec);
        if (!ec && v.is_object())
            if (const auto* id = v.get_object().if_contains("ID"); id && id->is_string())
                ok = !std::string(id->get_string()).empty();
        break;
    }
    case reply_kind::session_list: {
        std::vector<session_entry> sessions;
        ok = parse_sessions(body, sessions);
        break;
    }
    case reply_kind::txn: {
        txn_result r;
        r.committed = reply.status == 200;
        r.meta = reply.meta;
        ok = codec::parse_txn_reply(body, r);
        if (ok)
            check_round_trip(r.results);
        break;
    }
    case reply_kind::leader: {
        auto v = json::parse(body, ec);
        ok = !ec && v.is_string();
        if (ok)
            (void)std::string(v.get_string());
        break;
    }
    case reply_kind::agent_self: {
        auto v = json::parse(body, ec);
        const json::value* cfg =
            !ec && v.is_object() ? v.get_object().if_contains("Config") : nullptr;
        ok = cfg && cfg->is_object();
        if (ok)
            for (const auto* name : {"NodeName", "Datacenter", "Version"})
                if (const auto* f = cfg->get_object().if_contains(name); f && f->is_string())
                    (void)std::string(f->get_string());
        break;
    }
    case reply_kind::semaphore: {
        std::vector<kv_entry> entries;
        if (!(ok = codec::parse_kv_entries(body, entries)))
            break;
        for (const auto& e : entries) {
            if (!e.key.ends_with("/.lock"))
                continue;
            auto record = detail::semaphore_record::decode(e.value, 3);
            if (!(ok = record.has_value()))
                continue;
            record->prune(entries);
            const auto again = detail::semaphore_record::decode(record->encode(), 0);
            if (!again || again->limit != record->limit || again->holders != record->holders)
                fail("semaphore record changed through encode and decode");
        }
        break;
    }
    case reply_kind::count:
        break;
    }
    return ok;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2)
        return 0;
    const auto kind = static_cast<reply_kind>((data[0] & 0x7f) % unsigned(reply_kind::count));
    const bool token_sent = (data[0] & 0x80) != 0;
    byte_stream in{data + 2, size - 2, data[1]};
    const api_call call = call_for(kind, token_sent);
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
