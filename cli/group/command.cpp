// SPDX-License-Identifier: BSL-1.0
// `conclave group join|members|watch`: a conclave::group from the shell. join runs a
// command while a member (join.cpp); members prints them; watch prints their changes.
#include "cli/commands.hpp"
#include "cli/common/child_run.hpp"
#include "cli/common/escape_value.hpp"
#include "cli/common/recipe_command.hpp"
#include "cli/common/startup_check.hpp"
#include "cli/group/join.hpp"

#include <conclave/group.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

constexpr const char* group_usage_head =
    R"(Usage: conclave group join [options] <prefix> <id> [--] <command...>
       conclave group members [options] <prefix>
       conclave group watch [-count=<n>] [options] <prefix>

  A group under <prefix> (conclave::group): each member is the key <prefix>/<id>,
  holding its value, acquired with its session. Members print as "<id>=<value>",
  values on one line ('\', newlines and other control bytes escaped: \\, \n, \xHH).

  join: joins as <id> with -value, runs the command while a member, then leaves. The
  command's environment has CONCLAVE_MEMBER_KEY (<prefix>/<id>) and
  CONCLAVE_SESSION_TTL. If the membership is lost (its key deleted or taken, its
  session ended), the command's process group gets SIGTERM, then SIGKILL after 5s,
  and conclave exits 3. SIGINT/SIGTERM are forwarded the same way; conclave then
  leaves and exits 128+signal. No session or key is left behind.

  members: prints the members, one a line, by id.

  watch: prints the members, then each change, until SIGINT/SIGTERM or -count
  reports. Every report starts with "index <X-Consul-Index>", then one line per
  member that changed: "+ <id>=<value>" joined, "~ <id>=<value>" updated,
  "- <id>" left. Changes between two reports are coalesced.

Exit status: 0 done (join: the command's own status is ignored unless
-child-exit-code; watch: interrupted or -count reached); 1 bad arguments, an id held
by a live member or a key that is not a member's (another recipe's), or a failure to
reach Consul; 2 the command failed (with -child-exit-code); 3 the membership was lost
while the command ran; 130/143 join interrupted.

Options:

  -value=<string>          join: the member's value (default empty).
  -name=<string>           join: session name. Default "Member for '<command>' at
                           '<prefix>/<id>'".
  -ttl=<duration>          join: session TTL, 10s to 24h (default 15s): how long the
                           member stays after conclave stops renewing it.
  -lock-delay=<duration>   join: lock-delay of the session (default 0s): after the
                           session is lost, nobody may join as <id> for this long.
  -child-exit-code         join: exit 2 when the command exits non-zero or dies of a
                           signal.
  -count=<n>               watch: exit after n reports (the first counts). 0: never.
)";

void print_member(const char* mark, const member_info& m) {
    std::printf("%s%s=%s\n", mark, m.id.c_str(), escape_value(m.value).c_str());
}

asio::awaitable<int> run_members(client& consul, std::string prefix) {
    diagnostics d;
    group g{consul, prefix, group_options{}.with_diag(&d)};
    auto [ec, members] = co_await g.async_members(recipe_tuple_awaitable);
    if (ec)
        co_return report_failure(ec, d, consul);
    for (const auto& m : members)
        print_member("", m);
    co_return exit_code::ok;
}

asio::awaitable<std::tuple<error_code, group_view>> next_view(group_watch& w) {
    co_return co_await w.async_next(recipe_tuple_awaitable);
}

asio::awaitable<int> run_group_watch(client& consul, asio::signal_set& signals, std::string prefix,
                                     std::uint64_t count) {
    using namespace asio::experimental::awaitable_operators;
    if (auto stop = co_await check_agent(consul, signals, "watching"))
        co_return *stop;
    diagnostics d;
    group g{consul, prefix, group_options{}.with_diag(&d)};
    auto w = g.watch();
    for (std::uint64_t n = 0; count == 0 || n < count; ++n) {
        auto r = co_await (next_view(w) || next_signal(signals));
        if (r.index() == 1)
            co_return exit_code::ok;
        auto& [ec, view] = std::get<0>(r);
        if (ec) {
            std::fprintf(stderr, "Error watching group '%s': %s\n", prefix.c_str(),
                         recipe_failure(ec, d, consul).c_str());
            co_return exit_code::error;
        }
        std::printf("index %llu\n", static_cast<unsigned long long>(view.index));
        for (const auto& c : view.changes) {
            if (c.what == member_change::kind::left)
                std::printf("- %s\n", c.member.id.c_str());
            else
                print_member(c.what == member_change::kind::joined ? "+ " : "~ ", c.member);
        }
        std::fflush(stdout);
    }
    co_return exit_code::ok;
}

} // namespace

int group_command(args a) {
    const std::string usage = group_usage_head + held_command_help("membership", false);
    std::string_view op;
    if (auto stop =
            choose_operation(a, {"join", "members", "watch"}, "join, members or watch", usage, op))
        return *stop;
    group_join_settings cfg;
    flag_set flags;
    held_command_flags held;
    held.lock_delay = std::chrono::nanoseconds{0};
    std::uint64_t count = 0;
    flags.add_string("value", &cfg.value);
    flags.add_string("name", &cfg.session_name);
    flags.add_bool("child-exit-code", &cfg.child_exit_code);
    flags.add_uint("count", &count);
    held.add_to(flags, cfg);
    std::vector<std::string_view> rest;
    if (auto stop = parse_or_usage(flags, a.subspan(1), usage.c_str(), rest))
        return *stop;
    if (auto stop = only_for(flags, hand_over_flag_names, "lock and elect", usage))
        return *stop;
    if (op != "join") {
        if (auto stop = only_for(flags, child_flag_names, "join", usage))
            return *stop;
        if (flags.was_set("value"))
            return usage_error("Error! -value is for join", usage.c_str());
        if (op == "members" && flags.was_set("count"))
            return usage_error("Error! -count is for watch", usage.c_str());
        if (auto stop = one_argument(rest, "PREFIX", usage))
            return *stop;
        std::string prefix;
        if (auto stop = key_prefix(rest[0], prefix, usage))
            return *stop;
        return run_with_client(
            held.http, flags, "group", [&](client& consul, asio::signal_set& signals) {
                return op == "members" ? run_members(consul, prefix)
                                       : run_group_watch(consul, signals, prefix, count);
            });
    }
    if (flags.was_set("count"))
        return usage_error("Error! -count is for watch", usage.c_str());
    if (rest.size() < 3 || command_after(rest, 2).empty())
        return usage_error("Error! Key prefix, member id and child command must be specified",
                           usage.c_str());
    if (auto stop = key_prefix(rest[0], cfg.prefix, usage))
        return *stop;
    cfg.id = std::string(rest[1]);
    cfg.command = command_after(rest, 2);
    if (cfg.id.empty() || cfg.id.find('/') != std::string::npos)
        return usage_error("Error! Member id '" + cfg.id + "' must be non-empty, without '/'",
                           usage.c_str());
    if (refused(check_session_ttl(held.ttl)) || refused(check_lock_delay(held.lock_delay)) ||
        refused(held.check_health_ttl()))
        return exit_code::error;
    held.store(cfg);
    if (cfg.session_name.empty())
        cfg.session_name = session_name_for("Member", cfg.command, cfg.prefix + "/" + cfg.id);
    return run_with_client(held.http, flags, "group",
                           [&](client& consul, asio::signal_set& signals) {
                               return run_group_join(cfg, consul, signals);
                           });
}

} // namespace conclave::cli
