// SPDX-License-Identifier: BSL-1.0
// The dev agent's answers in Go's bytes (json.MarshalIndent of Consul's structs: field order,
// HTML-safe escaping, null for empty values) and its response heads, held to the bytes of
// Beast's message with conclave::dev::detail::append_beast_response_head.
#include "codec/json.hpp"
#include "devagent/src/go/gojson.hpp"
#include "devagent/src/routes/routes.hpp"
#include "devagent/src/server/beast_response_head.hpp"
#include "devagent/src/server/http_server.hpp"
#include "devagent/src/server/http_types.hpp"
#include "support/catch.hpp"

#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <limits>

using namespace conclave::dev::detail;
namespace json = boost::json;
namespace http = boost::beast::http;

namespace {

// Strings that need each of Go's escapes: HTML-safe <, >, &, U+2028/9, control characters,
// quotes and backslashes, invalid UTF-8 (U+FFFD), and valid multi-byte UTF-8 kept as is.
const std::vector<std::string> awkward_strings{
    "",
    "plain",
    "<script>&amp;</script>",
    "line\nbreak\ttab\rreturn\x01\x1f",
    "quote\" backslash\\ slash/",
    "\xE2\x80\xA8 and \xE2\x80\xA9",
    "caf\xC3\xA9 \xF0\x9F\x98\x80 \xE2\x82\xAC",
    "bad \xFF byte \xC3 truncated \xED\xA0\x80 surrogate",
    std::string("nul\0inside", 10),
};

conclave::kv_entry entry(std::string key, std::string value, std::string session = {}) {
    conclave::kv_entry e;
    e.key = std::move(key);
    e.value = std::move(value);
    e.session = std::move(session);
    e.flags = 42;
    e.lock_index = 3;
    e.create_index = 7;
    e.modify_index = 9;
    return e;
}

// A transaction answer as Consul's TxnResponse (TxnReadResponse when read-only) shapes it.
std::string txn_body_dom(const txn_outcome& o, bool read_only) {
    json::value results = nullptr;
    if (o.errors.empty()) {
        json::array a;
        for (const auto& r : o.results) {
            json::object item;
            item["KV"] = conclave::codec::kv_entry_to_json(r.entry, r.with_value);
            a.emplace_back(std::move(item));
        }
        results = std::move(a);
    }
    json::value errors = nullptr;
    if (!o.errors.empty()) {
        json::array a;
        for (const auto& [index, what] : o.errors) {
            json::object e;
            e["OpIndex"] = index;
            e["What"] = what;
            a.emplace_back(std::move(e));
        }
        errors = std::move(a);
    }
    json::object body;
    body["Results"] = std::move(results);
    body["Errors"] = std::move(errors);
    if (read_only) {
        body["Index"] = 0;
        body["LastContact"] = 0;
        body["KnownLeader"] = true;
        body["ConsistencyLevel"] = "";
        body["NotModified"] = false;
    }
    return gojson::answer_body(body);
}

// The response head as the server built it before append_response_head (to_beast,
// response_writer.cpp).
std::string beast_head(const http_response& r, bool head, bool keep_alive, bool http10_keep_alive,
                       std::string_view date) {
    http::response<http::string_body> res;
    res.version(11);
    res.result(r.status);
    for (const auto& [name, value] : r.headers)
        res.set(name, value);
    res.set(http::field::date, date);
    res.body() = r.body;
    res.prepare_payload();
    if (head)
        res.body().clear();
    res.keep_alive(keep_alive);
    if (http10_keep_alive)
        res.set(http::field::connection, "keep-alive");
    std::string out;
    conclave::dev::detail::append_beast_response_head(out, res);
    return out;
}

} // namespace

TEST_CASE("agent: transaction answers have TxnResponse's shape", "[unit][agent]") {
    std::vector<conclave::kv_entry> entries;
    // Every base64 padding case, binary bytes and an empty value (null).
    for (std::size_t n = 0; n < 8; ++n) {
        std::string value;
        for (std::size_t i = 0; i < n; ++i)
            value += char(0xF8 + i);
        entries.push_back(entry("key/" + std::to_string(n), value));
    }
    for (const auto& s : awkward_strings)
        entries.push_back(entry(s, s, s));
    entries.push_back(entry("locked", "v", "0b5a4b55-8ec4-7b2e-7d51-4c1f7d7b32b3"));
    auto big = entry("big", std::string(3000, 'x'));
    big.flags = big.lock_index = big.create_index = big.modify_index =
        std::numeric_limits<std::uint64_t>::max();
    entries.push_back(big);

    std::vector<txn_outcome> outcomes;
    outcomes.emplace_back(); // no results, no errors: "Results": []
    {
        txn_outcome o; // a lock: the lock's entry without its value, the get's with it
        o.applied = true;
        o.results.push_back({entries[3], false});
        o.results.push_back({entries[3], true});
        outcomes.push_back(o);
        txn_outcome all; // every kind of entry
        for (std::size_t i = 0; i < entries.size(); ++i)
            all.results.push_back({entries[i], i % 2 == 0});
        outcomes.push_back(all);
    }
    {
        txn_outcome o; // errors, with results dropped as Consul does
        o.errors.emplace_back(0, "failed to lock key \"a\", lock is already held");
        o.errors.emplace_back(3, "key \"<&>\" doesn't exist");
        for (const auto& s : awkward_strings)
            o.errors.emplace_back(7, s);
        outcomes.push_back(o);
        txn_outcome both = o; // results present but errors win: Results null
        both.results.push_back({entries[1], true});
        outcomes.push_back(both);
    }
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        for (const bool read_only : {false, true}) {
            INFO("outcome " << i << " read_only " << read_only);
            CHECK(gojson::answer_body(txn_json(outcomes[i], read_only)) ==
                  txn_body_dom(outcomes[i], read_only));
        }
    }
}

// A lock cycle's answers byte for byte as a Consul 1.8 dev agent writes them.
TEST_CASE("agent: a lock's transaction answer in Go's bytes", "[unit][agent]") {
    const std::string sess = "0b5a4b55-8ec4-7b2e-7d51-4c1f7d7b32b3";
    auto held = entry("cyc/<lock>&", "", sess);
    held.flags = 3304740253564472344ULL;
    held.lock_index = 14000;
    auto got = held;
    got.value = "holder";
    got.modify_index = std::numeric_limits<std::uint64_t>::max();
    txn_outcome lock;
    lock.results.push_back({held, false});
    lock.results.push_back({got, true});
    CHECK(gojson::answer_body(txn_json(lock, false)) == R"({
    "Results": [
        {
            "KV": {
                "LockIndex": 14000,
                "Key": "cyc/\u003clock\u003e\u0026",
                "Flags": 3304740253564472344,
                "Value": null,
                "Session": "0b5a4b55-8ec4-7b2e-7d51-4c1f7d7b32b3",
                "CreateIndex": 7,
                "ModifyIndex": 9
            }
        },
        {
            "KV": {
                "LockIndex": 14000,
                "Key": "cyc/\u003clock\u003e\u0026",
                "Flags": 3304740253564472344,
                "Value": "aG9sZGVy",
                "Session": "0b5a4b55-8ec4-7b2e-7d51-4c1f7d7b32b3",
                "CreateIndex": 7,
                "ModifyIndex": 18446744073709551615
            }
        }
    ],
    "Errors": null
}
)");
    txn_outcome failed;
    failed.errors.emplace_back(1, "failed to lock key \"cyc/lock\", lock is already held");
    CHECK(gojson::answer_body(txn_json(failed, true)) == R"({
    "Results": null,
    "Errors": [
        {
            "OpIndex": 1,
            "What": "failed to lock key \"cyc/lock\", lock is already held"
        }
    ],
    "Index": 0,
    "LastContact": 0,
    "KnownLeader": true,
    "ConsistencyLevel": "",
    "NotModified": false
}
)");
    CHECK(gojson::answer_body(txn_json(txn_outcome{}, false)) ==
          "{\n    \"Results\": [],\n    \"Errors\": null\n}\n");
}

TEST_CASE("agent: sessions in Go's bytes", "[unit][agent]") {
    session_rec s;
    s.id = "0b5a4b55-8ec4-7b2e-7d51-4c1f7d7b32b3";
    s.node = "dev-node";
    s.ttl = "15s";
    s.create_index = 11;
    s.modify_index = 12;
    // session_rec's defaults; NodeChecks and ServiceChecks null, no Checks.
    CHECK(gojson::answer_body(json::array{session_json(s)}) == R"([
    {
        "ID": "0b5a4b55-8ec4-7b2e-7d51-4c1f7d7b32b3",
        "Name": "",
        "Node": "dev-node",
        "LockDelay": 15000000000,
        "Behavior": "release",
        "TTL": "15s",
        "NodeChecks": null,
        "ServiceChecks": null,
        "CreateIndex": 11,
        "ModifyIndex": 12
    }
]
)");
    s.name = "<lock & \xE2\x80\xA8>";
    s.lock_delay_ns = -1;
    s.behavior = "delete";
    s.node_checks = std::vector<std::string>{};
    s.service_checks = std::vector<conclave::service_check>{{"svc:1", ""}};
    s.checks = {"serfHealth", "mem \"full\""};
    CHECK(gojson::answer_body(session_json(s)) == R"({
    "ID": "0b5a4b55-8ec4-7b2e-7d51-4c1f7d7b32b3",
    "Name": "\u003clock \u0026 \u2028\u003e",
    "Node": "dev-node",
    "LockDelay": -1,
    "Behavior": "delete",
    "TTL": "15s",
    "NodeChecks": [],
    "ServiceChecks": [
        {
            "ID": "svc:1",
            "Namespace": ""
        }
    ],
    "Checks": [
        "serfHealth",
        "mem \"full\""
    ],
    "CreateIndex": 11,
    "ModifyIndex": 12
}
)");
    CHECK(gojson::answer_body(json::array{}) == "[]\n");
}

TEST_CASE("agent: response heads match Beast's", "[unit][agent]") {
    std::vector<http_response> responses;
    {
        http_response r = json_response(json::array{});
        set_meta(r, 17);
        r.set("Vary", "Accept-Encoding");
        responses.push_back(r);
    }
    {
        http_response r = json_response(json::object{}, 409);
        set_leader_meta(r);
        r.set("Vary", "Accept-Encoding");
        responses.push_back(r);
    }
    responses.push_back(text_response(404, {}));
    responses.push_back(text_response(500, "No cluster leader"));
    responses.push_back(text_response(413, "Request body too large"));
    {
        http_response r;
        r.status = 301;
        r.set("Location", "/ui/");
        r.set("Content-Type", "text/html; charset=utf-8");
        r.body = "<a href=\"/ui/\">Moved Permanently</a>.\n\n";
        responses.push_back(r);
    }
    {
        http_response r; // an OPTIONS answer: no body
        r.set("Allow", "OPTIONS,GET,PUT,DELETE");
        r.set("Vary", "Accept-Encoding");
        responses.push_back(r);
    }
    {
        http_response r; // values trimmed; names equal but for case replace each other
        r.set("X-Padded", " \tvalue \t");
        r.set("content-type", "text/plain");
        r.set("Content-Type", "application/json");
        r.set("X-Empty", "   ");
        r.body = "x";
        responses.push_back(r);
    }
    for (std::size_t i = 0; i < responses.size(); ++i) {
        for (const bool head : {false, true}) {
            for (const bool keep_alive : {false, true}) {
                for (const bool http10 : {false, true}) {
                    if (http10 && !keep_alive)
                        continue;
                    INFO("response " << i << " head " << head << " keep_alive " << keep_alive
                                     << " http10 " << http10);
                    std::string out;
                    REQUIRE(append_response_head(out, responses[i], keep_alive, http10,
                                                 "Sun, 22 Nov 2026 07:00:00 GMT"));
                    CHECK(out == beast_head(responses[i], head, keep_alive, http10,
                                            "Sun, 22 Nov 2026 07:00:00 GMT"));
                }
            }
        }
    }
}

TEST_CASE("agent: path_is_clean agrees with clean_path", "[unit][agent]") {
    for (const std::string_view p :
         {"/", "/v1/kv/a", "/v1/kv/", "/v1/kv/a/b/", "", "v1/kv", "//", "/v1//kv", "/v1/./kv",
          "/v1/../kv", "/v1/kv/.", "/v1/kv/..", "/.", "/..", "/v1/kv/.hidden", "/v1/kv/..x",
          "/v1/kv/a.", "/v1/kv/...", "/v1/kv/a//"}) {
        INFO(p);
        CHECK(path_is_clean(p) == (clean_path(p) == p));
    }
}

TEST_CASE("agent: response heads match Beast's on many shapes", "[unit][agent]") {
    // The fast path (names distinct ignoring case, none of Date, Content-Length, Connection)
    // and the general one (Beast's set(): a later name replaces an earlier one whatever its
    // case) against Beast itself.
    const std::string_view date = "Sun, 22 Nov 2026 07:00:00 GMT";
    const std::vector<std::string_view> odd_values{
        "", " ", "\t", " \t x \t ", "a b", "\tlead", "trail\t ", "in\tside", "v"};
    std::vector<http_response> responses;
    for (unsigned status = 200; status < 600; ++status) {
        // Not 1xx, 204 or 304: no route answers with them (Beast writes no Content-Length
        // there, and refuses a body).
        if (status == 204 || status == 304)
            continue;
        http_response r;
        r.status = status;
        r.set("Content-Type", "application/json");
        r.set("X-Consul-Index", "17");
        r.set("X-Consul-Knownleader", "true");
        r.set("X-Consul-Lastcontact", "0");
        r.body = std::string(status % 7 * 10, 'b');
        responses.push_back(r);
    }
    for (const auto v : odd_values) {
        http_response r;
        r.set("X-Odd", std::string(v));
        r.set("Vary", std::string(v));
        r.body = "x";
        responses.push_back(r);
    }
    // Names equal ignoring case, among the route's headers and with the server's own (not
    // Connection: no route sets it, and Beast's keep_alive() edits its tokens).
    struct name_pair {
        header_name a;
        header_name b;
    };
    for (const auto& [a, b] : std::vector<name_pair>{
             {"Content-Type", "content-type"},
             {"X-Consul-Index", "X-CONSUL-INDEX"},
             {"Vary", "vary"},
             {"Date", "Vary"},
             {"date", "Vary"},
             {"Vary", "DATE"},
             {"content-length", "Vary"},
             {"Content-Length", "X-A"},
             {"X-Consul-Knownleader", "X-Consul-Lastcontact"},
             {"X-Consul-Index", "Content-Length"},
         }) {
        http_response r;
        r.set(a, " first ");
        r.set("X-Between", "between");
        r.set(b, "\tsecond");
        r.body = "{}\n";
        responses.push_back(r);
    }
    {
        // More headers than the fast path takes, then more than any path takes.
        http_response r;
        static constexpr std::array<header_name, 24> many{
            "H00", "H01", "H02", "H03", "H04", "H05", "H06", "H07", "H08", "H09", "H10", "H11",
            "H12", "H13", "H14", "H15", "H16", "H17", "H18", "H19", "H20", "H21", "H22", "H23"};
        for (std::size_t i = 0; i < many.size(); ++i) {
            r.set(many[i], " v" + std::to_string(i));
            responses.push_back(r);
        }
    }
    std::size_t compared = 0;
    for (std::size_t i = 0; i < responses.size(); ++i) {
        for (const bool keep_alive : {false, true}) {
            for (const bool http10 : {false, true}) {
                if (http10 && !keep_alive)
                    continue;
                INFO("response " << i << " keep_alive " << keep_alive << " http10 " << http10);
                std::string out = "kept:"; // appended to, not replaced
                if (!append_response_head(out, responses[i], keep_alive, http10, date)) {
                    CHECK(responses[i].headers.size() > 16);
                    CHECK(out == "kept:");
                    continue;
                }
                ++compared;
                CHECK(out == "kept:" + beast_head(responses[i], false, keep_alive, http10, date));
            }
        }
    }
    CHECK(compared > 1000);
}
