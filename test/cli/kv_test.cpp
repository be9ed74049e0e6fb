// SPDX-License-Identifier: BSL-1.0
// `conclave kv`: -base64, -recurse, -stale, export and import, as `consul kv` has them.
#include "cli/cli_fixture.hpp"
#include "cli/request_recorder.hpp"
#include "support/backend.hpp"
#include "support/run.hpp"

#include <fstream>

namespace conclave::test::cli {

namespace {

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::string export_entry(const std::string& key, int flags, const std::string& value64) {
    return "\t{\n\t\t\"key\": \"" + key + "\",\n\t\t\"flags\": " + std::to_string(flags) +
           ",\n\t\t\"value\": \"" + value64 + "\"\n\t}";
}

} // namespace

TEST_CASE("kv: -base64 shows values base64-encoded and takes them so", "[kv]") {
    cli_fixture f;
    // Bytes a terminal would mangle: 00 01 02 ff.
    auto put = f.run({"kv", "put", "-base64", "bin/k", "AAEC/w=="});
    CHECK(put->wait() == 0);
    CHECK(put->out() == "Success! Data written to: bin/k\n");

    auto raw = f.run({"kv", "get", "bin/k"});
    CHECK(raw->wait() == 0);
    CHECK(raw->out() == std::string("\x00\x01\x02\xff\n", 5));
    auto get = f.run({"kv", "get", "-base64", "bin/k"});
    CHECK(get->wait() == 0);
    CHECK(get->out() == "AAEC/w==\n");
    auto recurse = f.run({"kv", "get", "-recurse", "-base64", "bin/"});
    CHECK(recurse->wait() == 0);
    CHECK(recurse->out() == "bin/k:AAEC/w==\n");
    auto detailed = f.run({"kv", "get", "-detailed", "-base64", "bin/k"});
    CHECK(detailed->wait() == 0);
    CHECK(detailed->out().find("Value            AAEC/w==\n") != std::string::npos);

    // Not base64: nothing is written (consul kv put writes an empty value there).
    auto bad = f.run({"kv", "put", "-base64", "bin/bad", "a!"});
    CHECK(bad->wait() == 1);
    CHECK(bad->err() == "Error! Cannot base 64 decode data: illegal base64 data at input byte 1\n");
    CHECK(f.run({"kv", "get", "bin/bad"})->wait() == 1);
    CHECK(f.run({"kv", "delete", "bin/k"})->wait() == 0);
}

TEST_CASE("kv: put -acquire and -release lock and unlock a key for a session", "[kv]") {
    cli_fixture f;
    auto create = [&]() -> asio::awaitable<std::string> {
        co_return co_await f.consul.async_session_create(
            session_options{}.with_lock_delay(0ms).with_node_checks({}));
    };
    const auto mine = conclave::test::run(f.ioc, create(), 10s);
    const auto theirs = conclave::test::run(f.ioc, create(), 10s);
    auto put = [&](std::vector<std::string> args, int status, const std::string& out,
                   const std::string& err) {
        args.insert(args.begin(), {"kv", "put"});
        auto p = f.run(args);
        INFO(args.at(2) << " " << args.back());
        CHECK(p->wait() == status);
        CHECK(p->out() == out);
        CHECK(p->err().substr(0, err.size()) == err);
    };
    auto entry = [&] {
        const auto keys = f.keys();
        REQUIRE(keys.size() == 1);
        return keys.front();
    };

    // Consul's texts and statuses.
    const std::string missing = "Error! Missing -session (required with -acquire and -release)\n";
    put({"-acquire", "lk", "v"}, 1, "", missing);
    put({"-release", "lk", "v"}, 1, "", missing);
    put({"-acquire", "-session=" + mine, "lk", "one"}, 0, "Success! Lock acquired on: lk\n", "");
    CHECK(entry().session == mine);
    CHECK(entry().lock_index == 1);
    CHECK(entry().value == "one");
    put({"-acquire", "-session=" + theirs, "lk", "two"}, 1, "", "Error! Did not acquire lock\n");
    put({"-release", "-session=" + theirs, "lk"}, 1, "", "Error! Did not release lock\n");
    CHECK(entry().value == "one"); // a refusal writes nothing
    // The holder updates the value in place, then releases with a last one.
    put({"-acquire", "-flags=9", "-session=" + mine, "lk", "three"}, 0,
        "Success! Lock acquired on: lk\n", "");
    CHECK(entry().lock_index == 1);
    CHECK(entry().flags == 9);
    put({"-release", "-session=" + mine, "lk", "four"}, 0, "Success! Lock released on: lk\n", "");
    CHECK(entry().session.empty());
    CHECK(entry().value == "four");
    // -session alone is no acquire (consul kv put ignores it too).
    put({"-session=" + mine, "lk", "five"}, 0, "Success! Data written to: lk\n", "");
    CHECK(entry().session.empty());
    put({"-acquire", "-session=" + random_uuid(), "lk"}, 1, "",
        "Error! Failed writing data: Consul server error (HTTP 500): invalid session");
    put({"-cas", "-modify-index=0", "-acquire", "-session=" + mine, "lk"}, 1, "",
        "Cannot specify more than one of -cas, -acquire and -release!\n");

    auto destroy = [&]() -> asio::awaitable<void> {
        co_await f.consul.async_session_destroy(mine);
        co_await f.consul.async_session_destroy(theirs);
    };
    conclave::test::run(f.ioc, destroy(), 10s);
    CHECK(f.run({"kv", "delete", "lk"})->wait() == 0);
}

TEST_CASE("kv: get -recurse prints key:value lines, delete -recurse deletes only the prefix",
          "[kv]") {
    cli_fixture f;
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"a/1", "one"}, {"a/2/x", "two"}, {"ab", "other"}, {"b/1", "three"}})
        CHECK(f.run({"kv", "put", k, v})->wait() == 0);
    auto get = f.run({"kv", "get", "-recurse", "a/"});
    CHECK(get->wait() == 0);
    CHECK(get->out() == "a/1:one\na/2/x:two\n");
    auto all = f.run({"kv", "get", "-recurse"});
    CHECK(all->wait() == 0);
    CHECK(all->out() == "a/1:one\na/2/x:two\nab:other\nb/1:three\n");

    auto del = f.run({"kv", "delete", "-recurse", "a/"});
    CHECK(del->wait() == 0);
    CHECK(del->out() == "Success! Deleted keys with prefix: a/\n");
    std::vector<std::string> left;
    for (const auto& e : f.keys())
        left.push_back(e.key);
    CHECK(left == std::vector<std::string>{"ab", "b/1"});
    CHECK(f.run({"kv", "delete", "-recurse", "a"})->wait() == 0);
    CHECK(f.run({"kv", "delete", "-recurse", "b/"})->wait() == 0);
}

TEST_CASE("kv: -stale lets any server answer (?stale)", "[kv][dev-agent-only]") {
    // (Tagged dev-agent-only: Consul is not involved, a stand-in records the requests.)
    request_recorder consul(R"([{"LockIndex":0,"Key":"k","Flags":0,"Value":"dg==",)"
                            R"("CreateIndex":1,"ModifyIndex":1}])");
    cli_fixture f;
    const auto addr = "-http-addr=" + consul.address();
    auto stale = f.run({"kv", "get", "-stale", addr, "k"});
    CHECK(stale->wait() == 0);
    CHECK(stale->out() == "v\n");
    auto plain = f.run({"kv", "get", addr, "k"});
    CHECK(plain->wait() == 0);
    auto exported = f.run({"kv", "export", "-stale", addr, "k"});
    CHECK(exported->wait() == 0);
    const auto requests = consul.requests();
    REQUIRE(requests.size() == 3);
    CHECK(requests[0].find("stale") != std::string::npos);
    CHECK(requests[1].find("stale") == std::string::npos);
    CHECK(requests[2].find("stale") != std::string::npos);
}

TEST_CASE("kv: -namespace and -partition, or CONSUL_NAMESPACE and CONSUL_PARTITION, reach "
          "every request",
          "[kv][dev-agent-only]") {
    // (Tagged dev-agent-only: Consul is not involved, a stand-in records the requests.)
    request_recorder consul(R"([{"LockIndex":0,"Key":"k","Flags":0,"Value":"dg==",)"
                            R"("CreateIndex":1,"ModifyIndex":1}])");
    cli_fixture f;
    const auto addr = "-http-addr=" + consul.address();
    CHECK(f.run({"kv", "get", "-namespace=team-a", "-partition=east", addr, "k"})->wait() == 0);
    CHECK(f.run({"kv", "get", addr, "k"}, {"CONSUL_NAMESPACE=team-b"})->wait() == 0);
    CHECK(
        f.run({"kv", "get", "-namespace=team-c", addr, "k"}, {"CONSUL_NAMESPACE=team-b"})->wait() ==
        0); // the flag wins
    CHECK(f.run({"kv", "get", addr, "k"})->wait() == 0);
    const auto requests = consul.requests();
    REQUIRE(requests.size() == 4);
    CHECK(requests[0] == "GET /v1/kv/k?ns=team-a&partition=east HTTP/1.1");
    CHECK(requests[1] == "GET /v1/kv/k?ns=team-b HTTP/1.1");
    CHECK(requests[2] == "GET /v1/kv/k?ns=team-c HTTP/1.1");
    CHECK(requests[3] == "GET /v1/kv/k HTTP/1.1");
}

TEST_CASE("kv: a namespace Consul without Enterprise refuses is an error that says so", "[kv]") {
    cli_fixture f;
    auto put = f.run({"kv", "put", "-namespace=team-a", "ns/k", "v"});
    CHECK(put->wait() == 1);
    CHECK(put->err().find("Namespaces are a Consul Enterprise feature") != std::string::npos);
    CHECK(f.run({"kv", "get", "ns/k"})->wait() == 1); // nothing written
}

TEST_CASE("kv export prints consul kv export's JSON", "[kv]") {
    cli_fixture f;
    CHECK(f.run({"kv", "put", "-flags=5", "app/a<b", "x"})->wait() == 0);
    CHECK(f.run({"kv", "put", "app/empty"})->wait() == 0);
    CHECK(f.run({"kv", "put", "other", "y"})->wait() == 0);
    auto ex = f.run({"kv", "export", "app/"});
    CHECK(ex->wait() == 0);
    // Tabs, Go's escapes (<), "" for an empty value.
    CHECK(ex->out() == "[\n" + export_entry("app/a\\u003cb", 5, "eA==") + ",\n" +
                           export_entry("app/empty", 0, "") + "\n]\n");
    auto none = f.run({"kv", "export", "nothing/"});
    CHECK(none->wait() == 0);
    CHECK(none->out() == "[]\n");
    auto all = f.run({"kv", "export"});
    CHECK(all->wait() == 0);
    CHECK(all->out().find(export_entry("other", 0, "eQ==")) != std::string::npos);
    CHECK(f.run({"kv", "delete", "-recurse", "app/"})->wait() == 0);
    CHECK(f.run({"kv", "delete", "other"})->wait() == 0);
}

TEST_CASE("kv import writes each entry of an export, given as @file, - or the argument", "[kv]") {
    cli_fixture f;
    const std::string data = "[\n" + export_entry("imp/a", 7, "AAEC") + ",\n" +
                             export_entry("imp/b\\u003c", 0, "") + "\n]\n";
    const auto file = f.path("export.json");
    write_file(file, data);
    auto check_imported = [&](process& p) {
        CHECK(p.wait() == 0);
        CHECK(p.out() == "Imported: imp/a\nImported: imp/b<\n");
        auto again = f.run({"kv", "export", "imp/"});
        CHECK(again->wait() == 0);
        CHECK(again->out() == data); // the round trip gives the same bytes
        auto detailed = f.run({"kv", "get", "-detailed", "imp/a"});
        CHECK(detailed->wait() == 0);
        CHECK(detailed->out().find("Flags            7\n") != std::string::npos);
        CHECK(f.run({"kv", "delete", "-recurse", "imp/"})->wait() == 0);
    };
    check_imported(*f.run({"kv", "import", "@" + file}));
    check_imported(*f.run_with_stdin({"kv", "import", "-"}, file));
    check_imported(*f.run({"kv", "import", data}));

    // Stops at the first bad entry, having written those before it.
    auto bad = f.run({"kv", "import",
                      R"([{"key":"imp/ok","flags":0,"value":"eA=="},)"
                      R"({"key":"imp/bad","flags":0,"value":"!!"}])"});
    CHECK(bad->wait() == 1);
    CHECK(bad->err() == "Error base 64 decoding value for key imp/bad: illegal base64 data at "
                        "input byte 0\n");
    CHECK(f.keys().empty()); // checked before anything is written
    auto not_json = f.run({"kv", "import", "nojson"});
    CHECK(not_json->wait() == 1);
    CHECK(not_json->err().rfind("Cannot unmarshal data: ", 0) == 0);
    auto missing = f.run({"kv", "import", "@" + f.path("none.json")});
    CHECK(missing->wait() == 1);
    CHECK(missing->err() == "Error! Failed to read file: open " + f.path("none.json") +
                                ": No such file or directory\n");
    auto no_data = f.run({"kv", "import"});
    CHECK(no_data->wait() == 1);
    CHECK(no_data->err().rfind("Error! Missing DATA argument\n", 0) == 0);
}

} // namespace conclave::test::cli
