// SPDX-License-Identifier: BSL-1.0
// The double barrier's rules, without I/O: what the keys under its prefix say (who is
// inside, whether the barrier opened) and what an enter or a leave does next.
//
// Layout (flags double_barrier_flag_value on every key):
// - `<prefix>/<session>`: a participant, acquired with its session; its value is the
//   number of participants it expects. It counts only while its own session holds it: a
//   key whose session ended is not counted, whether Consul deleted it (behavior delete) or
//   only released it (behavior release; such keys are deleted by check-and-set when seen).
// - `<prefix>/.ready`: written (create-only) by the enter that saw the N-th participant:
//   one line "<session> <CreateIndex of its key>" per participant inside then. The barrier
//   is open while one of them is still inside with that same key: late readers pass on
//   it, and a marker left by a round whose participants all left or crashed is stale
//   (deleted, by check-and-set, by whoever sees it so).
#pragma once

#include "recipes/common/recipe_flags.hpp"

#include <conclave/consul/kv.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::detail {

/// The name of the marker key under the prefix.
inline constexpr std::string_view ready_name = ".ready";

/// A participant of a round: its session, and the CreateIndex of its key then (the same
/// session entering again later has a new key, so it is not of that round).
struct round_member {
    std::string session;
    std::uint64_t create_index = 0;
    bool operator==(const round_member&) const = default;
};

/// A live participant: its key is held by its own session.
struct barrier_participant {
    round_member id;
    std::uint32_t expected = 0; ///< the number of participants it was told
    std::uint64_t modify_index = 0;
};

/// The `.ready` marker as read.
struct ready_marker {
    std::vector<round_member> members;
    std::uint64_t modify_index = 0;
};

/// What the keys under a double barrier's prefix say.
struct barrier_reading {
    std::vector<barrier_participant> live;
    /// Participant keys no session holds any more (key, ModifyIndex): to delete.
    std::vector<std::pair<std::string, std::uint64_t>> dead;
    std::optional<ready_marker> ready;
    /// Why the prefix is not a double barrier's (errc::conflict), naming the key; empty if it is.
    std::string problem;

    const barrier_participant* find(const std::string& session) const {
        for (const auto& p : live)
            if (p.id.session == session)
                return &p;
        return nullptr;
    }
    /// `m` is still inside, with the key it had in its round.
    bool inside(const round_member& m) const {
        const auto* p = find(m.session);
        return p != nullptr && p->id.create_index == m.create_index;
    }
    /// The marker exists and one of its round is still inside.
    bool open() const {
        return ready && std::any_of(ready->members.begin(), ready->members.end(),
                                    [&](const round_member& m) { return inside(m); });
    }
};

/// The marker's text for the participants inside now.
inline std::string format_ready(const std::vector<barrier_participant>& live) {
    std::string text;
    for (const auto& p : live)
        text += p.id.session + " " + std::to_string(p.id.create_index) + "\n";
    return text;
}

/// The members a marker's text lists; none when it is not such a text.
inline std::optional<std::vector<round_member>> parse_ready(const std::string& text) {
    std::vector<round_member> members;
    std::istringstream lines{text};
    std::string line;
    while (std::getline(lines, line)) {
        if (line.empty())
            continue;
        const auto space = line.find(' ');
        if (space == std::string::npos || space == 0)
            return std::nullopt;
        round_member m;
        m.session = line.substr(0, space);
        const char* first = line.data() + space + 1;
        const char* last = line.data() + line.size();
        const auto [end, ec] = std::from_chars(first, last, m.create_index);
        if (ec != std::errc{} || end != last)
            return std::nullopt;
        members.push_back(std::move(m));
    }
    return members;
}

/// A participant key's value: the number of participants, 1 .. 2^32-1.
inline std::optional<std::uint32_t> parse_expected(const std::string& text) {
    std::uint32_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size() || n == 0)
        return std::nullopt;
    return n;
}

/// Judges the keys listed under `prefix` + "/".
inline barrier_reading read_barrier(const std::string& prefix,
                                    const std::vector<kv_entry>& entries) {
    barrier_reading r;
    const auto base = prefix + "/";
    for (const auto& e : entries) {
        if (e.key.compare(0, base.size(), base) != 0)
            continue; // a sibling that shares the prefix's text ("p" lists "p2/x" too)
        const auto name = e.key.substr(base.size());
        const auto complain = [&](const std::string& why) {
            if (r.problem.empty())
                r.problem = "key " + e.key + " is not a double barrier's: " + why;
        };
        if (auto why = foreign_flags(e.flags, double_barrier_flag_value, "a double barrier");
            !why.empty()) {
            complain(why);
            continue;
        }
        if (name == ready_name) {
            auto members = parse_ready(e.value);
            if (!members) {
                complain("its value is not a list of \"<session> <index>\" lines");
                continue;
            }
            r.ready = ready_marker{std::move(*members), e.modify_index};
            continue;
        }
        const auto expected = parse_expected(e.value);
        if (name.empty() || name.find('/') != std::string::npos || !expected) {
            complain("a participant's key is named by its session and holds a count above 0");
            continue;
        }
        if (e.session != name) {
            if (e.session.empty())
                r.dead.emplace_back(e.key, e.modify_index);
            else
                complain("session " + e.session + " holds it, not its own session");
            continue;
        }
        r.live.push_back(
            barrier_participant{round_member{name, e.create_index}, *expected, e.modify_index});
    }
    return r;
}

/// What an enter that wrote its key does next.
enum class enter_step {
    open,           ///< the barrier is open: done
    wait,           ///< fewer than N inside: wait for a change
    write_ready,    ///< N are inside: write the marker (create-only), then read again
    remove_stale,   ///< a stale marker: delete it (check-and-set), then read again
    not_inside,     ///< its own key is gone or not held by its session (session lost?)
    conflict,       ///< a key of the prefix is not a double barrier's (reading.problem)
    count_conflict, ///< a participant inside expects another number
};

inline enter_step decide_enter(const barrier_reading& r, const std::string& session,
                               std::uint32_t n) {
    if (!r.problem.empty())
        return enter_step::conflict;
    if (r.find(session) == nullptr)
        return enter_step::not_inside;
    if (r.open())
        return enter_step::open;
    if (r.ready)
        return enter_step::remove_stale;
    for (const auto& p : r.live)
        if (p.expected != n)
            return enter_step::count_conflict;
    return r.live.size() >= n ? enter_step::write_ready : enter_step::wait;
}

/// The round a leave waits for, from the reading before it deleted its key: the marker's
/// members when it lists this session, else everyone inside then when this session is
/// inside too, else nobody (a leave without an enter).
inline std::vector<round_member> round_of(const barrier_reading& r, const std::string& session) {
    if (r.ready && std::any_of(r.ready->members.begin(), r.ready->members.end(),
                               [&](const round_member& m) { return m.session == session; }))
        return r.ready->members;
    std::vector<round_member> round;
    if (r.find(session) == nullptr)
        return round;
    for (const auto& p : r.live)
        round.push_back(p.id);
    return round;
}

/// Whether every other member of `round` has left (or crashed: its key is gone or its
/// session no longer holds it).
inline bool all_left(const barrier_reading& r, const std::vector<round_member>& round,
                     const std::string& session) {
    return std::none_of(round.begin(), round.end(),
                        [&](const round_member& m) { return m.session != session && r.inside(m); });
}

} // namespace conclave::detail
