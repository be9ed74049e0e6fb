// The dev agent writes its hot answers (KV reads, transactions, sessions, response heads)
// directly rather than through a boost::json DOM and Beast's field list. These tests hold
// each direct writer to the bytes of the path it replaced: gojson::marshal_indent of the DOM,
// and Beast's message with conclave::detail::http::append_head.
#include "codec/json.hpp"
#include "dev/gojson.hpp"
#include "dev/http_server.hpp"
#include "dev/http_types.hpp"
#include "dev/routes.hpp"
#include "http/message_head.hpp"

#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <limits>

using namespace conclave::dev::detail;
namespace json = boost::json;
namespace http = boost::beast::http;

namespace {

// Drives the writer through a DOM, so that any value marshal_indent takes is a test case.
void write_dom(gojson::indent_writer& w, const json::value& v) {
    switch (v.kind()) {
    case json::kind::null:
        w.null();
        break;
    case json::kind::bool_:
        w.boolean(v.get_bool());
        break;
    case json::kind::int64:
        w.number(std::int64_t(v.get_int64()));
        break;
    case json::kind::uint64:
        w.number(std::uint64_t(v.get_uint64()));
        break;
    case json::kind::double_:
        FAIL("the writer has no doubles");
        break;
    case json::kind::string:
        w.string(v.get_string());
        break;
    case json::kind::array:
        w.begin_array();
        for (const auto& item : v.get_array())
            write_dom(w, item);
        w.end_array();
        break;
    case json::kind::object:
        w.begin_object();
        for (const auto& member : v.get_object()) {
            w.key(member.key());
            write_dom(w, member.value());
        }
        w.end_object();
        break;
    }
}

std::string written(const json::value& v) {
    std::string out;
    gojson::indent_writer w(out);
    write_dom(w, v);
    w.finish();
    return out;
}

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

// The transaction answer as routes_txn.cpp built it before indent_writer.
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
    return gojson::marshal_indent(body);
}

// The response head as http_server.cpp built it before append_response_head.
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
    conclave::detail::http::append_head(out, res);
    return out;
}

} // namespace

TEST_CASE("agent: indent_writer writes what marshal_indent writes", "[unit][agent]") {
    std::vector<json::value> values{
        nullptr,
        true,
        json::value(std::int64_t(-5)),
        json::value(std::numeric_limits<std::int64_t>::min()),
        json::value(std::numeric_limits<std::uint64_t>::max()),
        json::array{},
        json::object{},
        json::array{json::array{}, json::object{}, nullptr},
        json::parse(R"({"a": {"b": [1, {"c": []}, {}], "d": {}}, "e": [[[]]], "f": false})"),
        json::parse(R"([{"x": {"y": {"z": [1, 2, 3]}}}, [], [{}]])"),
    };
    for (const auto& s : awkward_strings) {
        values.emplace_back(json::string(s));
        json::object o;
        o[s] = s; // keys are escaped as strings are
        o["next"] = json::array{json::string(s), 1};
        values.emplace_back(std::move(o));
    }
    for (const auto& v : values) {
        INFO(gojson::marshal(v));
        CHECK(written(v) == gojson::marshal_indent(v));
    }
}

TEST_CASE("agent: KV entries and transaction answers match the DOM path", "[unit][agent]") {
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

    for (const auto& e : entries) {
        for (const bool with_value : {true, false}) {
            std::string out;
            gojson::indent_writer w(out);
            write_kv_entry(w, e, with_value);
            w.finish();
            INFO(e.key << " with_value " << with_value);
            CHECK(out == gojson::marshal_indent(conclave::codec::kv_entry_to_json(e, with_value)));
        }
    }

    // A GET /v1/kv answer: an array of entries.
    {
        std::string out;
        gojson::indent_writer w(out);
        w.begin_array();
        json::array dom;
        for (const auto& e : entries) {
            write_kv_entry(w, e);
            dom.emplace_back(conclave::codec::kv_entry_to_json(e));
        }
        w.end_array();
        w.finish();
        CHECK(out == gojson::marshal_indent(dom));
    }

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
            CHECK(txn_body(outcomes[i], read_only) == txn_body_dom(outcomes[i], read_only));
        }
    }
}

// txn_body_direct writes the lock cycle's answers from fragments: it must take them, and
// write what the general writer (and the DOM) write; what it declines goes there.
TEST_CASE("agent: the direct transaction writer matches the general one", "[unit][agent]") {
    const std::string sess = "0b5a4b55-8ec4-7b2e-7d51-4c1f7d7b32b3";
    auto held = entry("cyc/lock", "", sess);
    held.flags = 3304740253564472344ULL;
    held.lock_index = 14000;
    auto released = held;
    released.session.clear();
    auto extreme = entry("", "", "s");
    extreme.flags = extreme.lock_index = extreme.create_index = extreme.modify_index =
        std::numeric_limits<std::uint64_t>::max();
    auto zero = entry("k", "value not shown");
    zero.flags = zero.lock_index = zero.create_index = zero.modify_index = 0;

    std::vector<txn_outcome> taken(1); // no results: "Results": []
    {
        txn_outcome lock; // check-index (or check-not-exists: no result), then the lock
        lock.results.push_back({released, false});
        lock.results.push_back({held, false});
        taken.push_back(lock);
        txn_outcome release;
        release.results.push_back({released, false});
        taken.push_back(release);
        txn_outcome many;
        for (const auto& e : {held, released, extreme, zero, entry("a/b c~\x7f", "")})
            many.results.push_back({e, e.value.empty()}); // an empty value shows as null
        taken.push_back(many);
    }
    for (std::size_t i = 0; i < taken.size(); ++i) {
        for (const bool read_only : {false, true}) {
            INFO("outcome " << i << " read_only " << read_only);
            std::string out = "left over";
            REQUIRE(txn_body_direct(taken[i], read_only, out));
            CHECK(out == txn_body_general(taken[i], read_only));
            CHECK(out == txn_body_dom(taken[i], read_only));
            CHECK(txn_body(taken[i], read_only) == out);
        }
    }

    std::vector<txn_outcome> declined;
    {
        txn_outcome get; // a value to show
        get.results.push_back({entry("k", "v"), true});
        declined.push_back(get);
        for (const auto& s : awkward_strings) {
            if (gojson::is_plain(s))
                continue;
            txn_outcome key;
            key.results.push_back({held, false});
            key.results.push_back({entry(s, ""), false});
            declined.push_back(key);
            txn_outcome session;
            session.results.push_back({entry("k", "", s), false});
            declined.push_back(session);
        }
        txn_outcome failed;
        failed.errors.emplace_back(1, "failed to lock key \"cyc/lock\", lock is already held");
        declined.push_back(failed);
    }
    for (std::size_t i = 0; i < declined.size(); ++i) {
        for (const bool read_only : {false, true}) {
            INFO("declined outcome " << i << " read_only " << read_only);
            std::string out;
            CHECK_FALSE(txn_body_direct(declined[i], read_only, out));
            CHECK(txn_body(declined[i], read_only) == txn_body_dom(declined[i], read_only));
        }
    }
}

// gojson::is_plain: exactly the strings the writer copies without escaping.
TEST_CASE("agent: is_plain agrees with the writer", "[unit][agent]") {
    for (int b = 0; b < 256; ++b) {
        for (const std::size_t at : {0, 5, 16, 31}) {
            std::string s(40, 'a');
            s[at] = char(b);
            std::string out;
            gojson::indent_writer w(out);
            w.string(s);
            INFO("byte " << b << " at " << at);
            if (gojson::is_plain(s))
                CHECK(out == "\"" + s + "\"");
            CHECK(gojson::is_plain(s) == (b >= 0x20 && b < 0x80 && b != '"' && b != '\\' &&
                                          b != '<' && b != '>' && b != '&'));
        }
    }
}

TEST_CASE("agent: sessions match the DOM path", "[unit][agent]") {
    session_rec base;
    base.id = "0b5a4b55-8ec4-7b2e-7d51-4c1f7d7b32b3";
    base.node = "dev-node";
    base.ttl = "15s";
    base.create_index = 11;
    base.modify_index = 12;

    std::vector<session_rec> sessions;
    sessions.push_back(base); // NodeChecks and ServiceChecks null, no Checks
    {
        session_rec s = base;
        s.name = "<lock & \xE2\x80\xA8>";
        s.lock_delay_ns = -1;
        s.behavior = "delete";
        s.node_checks = std::vector<std::string>{};
        s.service_checks = std::vector<conclave::service_check>{};
        sessions.push_back(s);
        s.node_checks = std::vector<std::string>{"serfHealth", "disk \"full\""};
        s.service_checks = std::vector<conclave::service_check>{{"svc:1", ""}, {"svc:2", "ns"}};
        s.checks = {"serfHealth", "mem"};
        sessions.push_back(s);
    }
    for (const auto& s : sessions) {
        std::string out;
        gojson::indent_writer w(out);
        write_session(w, s);
        w.finish();
        CHECK(out == gojson::marshal_indent(session_json(s)));
    }
    // The list answers: an array of them, and the empty list.
    std::string out;
    gojson::indent_writer w(out);
    w.begin_array();
    json::array dom;
    for (const auto& s : sessions) {
        write_session(w, s);
        dom.emplace_back(session_json(s));
    }
    w.end_array();
    w.finish();
    CHECK(out == gojson::marshal_indent(dom));
    out.clear();
    gojson::indent_writer empty(out);
    empty.begin_array();
    empty.end_array();
    empty.finish();
    CHECK(out == gojson::marshal_indent(json::array{}));
}

TEST_CASE("agent: response heads match Beast's", "[unit][agent]") {
    std::vector<http_response> responses;
    {
        http_response r = json_text_response("[]\n");
        set_meta(r, 17);
        r.set("Vary", "Accept-Encoding");
        responses.push_back(r);
    }
    {
        http_response r = json_text_response("{}\n", 409);
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

namespace {

// What Go writes for one byte sequence inside a string (the tokens the test below uses).
std::string go_escaped(std::string_view token) {
    if (token == "\"")
        return "\\\"";
    if (token == "\\")
        return "\\\\";
    if (token == "\n")
        return "\\n";
    if (token == "<")
        return "\\u003c";
    if (token == ">")
        return "\\u003e";
    if (token == "&")
        return "\\u0026";
    if (token == "\x01")
        return "\\u0001";
    if (token == "\x1f")
        return "\\u001f";
    if (token == "\xFF")
        return "\\ufffd";
    return std::string(token); // plain: ' ', '~', DEL, valid UTF-8
}

} // namespace

TEST_CASE("agent: strings escape each special byte at every offset", "[unit][agent]") {
    // The writer scans 16 and 8 bytes at a time: each special byte at each offset of strings
    // of many lengths, as a string, as a key, and as a member of object().
    const std::vector<std::string_view> tokens{"\"",   "\\",   "\n", "<", ">",    "&",       "\x01",
                                               "\x1f", "\xFF", " ",  "~", "\x7f", "\xC3\xA9"};
    for (std::size_t len = 0; len <= 40; ++len) {
        for (std::size_t at = 0; at <= len; ++at) {
            for (const auto token : tokens) {
                const std::string base(len, 'k');
                const std::string s = base.substr(0, at) + std::string(token) + base.substr(at);
                const std::string quoted =
                    '"' + base.substr(0, at) + go_escaped(token) + base.substr(at) + '"';
                INFO("length " << len << " offset " << at << " byte "
                               << int(static_cast<unsigned char>(token[0])));
                std::string out;
                gojson::indent_writer w(out);
                w.string(s);
                CHECK(out == quoted);

                out.clear();
                gojson::indent_writer k(out);
                k.begin_object();
                k.key(s);
                k.null();
                k.end_object();
                CHECK(out == "{\n    " + quoted + ": null\n}");

                out.clear();
                gojson::indent_writer o(out);
                using member = gojson::indent_writer::member;
                const std::array<member, 2> members{
                    member{"S", member::type::string, s, 0},
                    member{"N", member::type::number, {}, len},
                };
                o.object(members);
                CHECK(out ==
                      "{\n    \"S\": " + quoted + ",\n    \"N\": " + std::to_string(len) + "\n}");
            }
        }
    }
}

TEST_CASE("agent: indent_writer::object writes what its calls write", "[unit][agent]") {
    using member = gojson::indent_writer::member;
    using type = member::type;
    std::vector<std::vector<member>> objects;
    objects.emplace_back(); // {}
    for (std::size_t n = 0; n < 8; ++n) {
        static const std::string bytes = "\xF8\xF9\xFA\xFB\xFC\xFD\xFE\xFF";
        objects.push_back({member{"B", type::base64, std::string_view(bytes).substr(0, n), 0},
                           member{"Zero", type::number, {}, 0},
                           member{"Max", type::number, {}, ~std::uint64_t(0)},
                           member{"Null", type::null, {}, 0}});
    }
    for (const auto& s : awkward_strings)
        objects.push_back(
            {member{"Key", type::string, s, 0}, member{"Empty", type::string, "", 0}});
    std::vector<member> wide; // more members than object() sizes at once
    for (std::size_t i = 0; i < 14; ++i)
        wide.push_back(member{"Field", type::number, {}, i});
    objects.push_back(wide);

    const auto by_calls = [](gojson::indent_writer& w, const std::vector<member>& ms) {
        w.begin_object();
        for (const member& m : ms) {
            w.key(m.key);
            switch (m.t) {
            case type::number:
                w.number(m.n);
                break;
            case type::string:
                w.string(m.text);
                break;
            case type::base64:
                w.base64(m.text);
                break;
            case type::null:
                w.null();
                break;
            }
        }
        w.end_object();
    };
    // At the top, as array elements, and as a member's value two levels down.
    const auto document = [&](bool fast, const std::vector<member>& ms) {
        std::string out;
        gojson::indent_writer w(out);
        const auto one = [&] {
            if (fast)
                w.object(ms);
            else
                by_calls(w, ms);
        };
        w.begin_array();
        one();
        one();
        w.begin_object();
        w.key("Inner");
        one();
        w.key("After");
        w.boolean(true);
        w.end_object();
        w.end_array();
        one();
        w.finish();
        return out;
    };
    for (std::size_t i = 0; i < objects.size(); ++i) {
        INFO("object " << i);
        CHECK(document(true, objects[i]) == document(false, objects[i]));
    }
}
