#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Judges a run of consul_lock.sh:

    check.py WORK TAG MODE:LIMIT ...

WORK holds, per MODE, `MODE.runs` (one line per lock command run: its session name and
exit status), `MODE.holds` (one JSON line per hold, from hold.py) and `MODE.leftovers`
(what leftovers.py found of each run's session after its command had exited), and
`final.leftovers` (sessions named after TAG and keys under TAG/MODE once every contender
had exited). Prints one line per mode, notes, one line per problem, and last the summary
`holds=N conclave=A consul=B overlaps=0 leaked=0 consul_lock_sessions_left=C`; exits 0
only when nothing is wrong.

Every run must exit 0 and record exactly one hold. hold.py's [start, end] (CLOCK_MONOTONIC,
one clock for the whole machine) lies inside its hold, so holds that may not overlap give
intervals that do not either (touching is allowed), whatever the scheduling delays. Every
hold also read the lock key during the hold:

- Lock (LIMIT 1): no two intervals overlap. While a session holds `PREFIX/.lock`, nothing
  writes that key (acquires by others fail without writing; neither api.Lock nor conclave
  writes a held lock), so the ModifyIndex read during the hold is the index of the write
  that granted it: the fencing token conclave hands its child (CONCLAVE_LOCK_TOKEN,
  `<modify index>:<lock index>:<session>:<key>`, which must equal what the key says), and
  for a consul lock holder, which gets no token, the same values read from the key. Holds
  are disjoint, so in the order of their intervals the grant indexes strictly increase,
  for both kinds. (LockIndex is not monotonic: it counts acquisitions since the key was
  created, and the last holder out deletes the key.) Both handovers, conclave to consul lock
  and back, must have happened.
- Semaphore (LIMIT > 1): at most LIMIT intervals at any instant. The holder's session is in
  the `Holders` of `PREFIX/.lock` and owns its contender key `PREFIX/<session>`. conclave's
  token is the ModifyIndex of the write to `.lock` that admitted it: unique, and not above
  the `.lock` index read after it. (Go's api.Semaphore has no token: `.lock` is rewritten by
  every admission and departure. Holds overlap, so grant order is not interval order.)
  Some hold must have seen LIMIT holders in `.lock` (`full`) and some a conclave and a
  consul lock holder together (`mixed`): with every contender always waiting, the slots
  are full nearly all the time, whereas the intervals, which begin only once Python has
  started, overlap less often on a loaded machine (`most_at_once` is only reported).
"""
import collections
import json
import sys

LOCK_FLAGS = 3304740253564472344       # Go's api.LockFlagValue
SEMAPHORE_FLAGS = 16210313421097356768  # Go's api.SemaphoreFlagValue


def kind_of(name):
    parts = name.split("/")  # TAG/MODE/KIND/N.RUN
    return parts[2] if len(parts) == 4 else "?"


def lines(path):
    with open(path) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def check_mode(work, tag, mode, limit, problems):
    prefix = f"{tag}/{mode}"
    lock_key = prefix + "/.lock"

    def bad(text):
        problems.append(f"{mode}: {text}")

    runs = dict(line.rsplit(" ", 1) for line in lines(f"{work}/{mode}.runs"))
    holds = [json.loads(line) for line in lines(f"{work}/{mode}.holds")]
    for name, status in runs.items():
        if status != "0":
            bad(f"{name} exited with status {status}")
    seen = collections.Counter(h["name"] for h in holds)
    for name in runs:
        if seen[name] != 1:
            bad(f"{name} recorded {seen[name]} holds, not 1")
    for name in seen:
        if name not in runs:
            bad(f"{name} held, but its lock command never finished")

    tokens, holder_sets = [], []
    for h in holds:
        who = h["name"]
        if "error" in h:
            bad(f"{who}: {h['error']}")
            continue
        if len(h["sessions"]) != 1:
            bad(f"{who}: {len(h['sessions'])} sessions of that name during the hold, not 1")
            continue
        session, key = h["sessions"][0], h["lock"]
        token = h["token"]
        if key is None:
            bad(f"{who}: {lock_key} absent during the hold")
            continue
        if limit == 1:
            if key["Flags"] != LOCK_FLAGS or key["Session"] != session:
                bad(f"{who}: {lock_key} is not held by its session during the hold: {key}")
            h["grant"] = key["ModifyIndex"]
            expected = f"{key['ModifyIndex']}:{key['LockIndex']}:{session}:{lock_key}"
            if kind_of(who) == "conclave" and token != expected:
                bad(f"{who}: CONCLAVE_LOCK_TOKEN {token!r}, the key says {expected!r}")
        else:
            value = json.loads(key["Value"] or "{}")
            holders = value.get("Holders") or {}
            if key["Flags"] != SEMAPHORE_FLAGS or value.get("Limit") != limit:
                bad(f"{who}: {lock_key} is not a semaphore of limit {limit}: {key}")
            if session not in holders or len(holders) > limit:
                bad(f"{who}: its session is not among the {len(holders)} holders in {lock_key}")
            holder_sets.append(holders)
            c = h.get("contender")
            if c is None or c["Session"] != session or c["Flags"] != SEMAPHORE_FLAGS:
                bad(f"{who}: contender key {prefix}/{session} is not its own: {c}")
            if kind_of(who) == "conclave":
                parts = (token or "").split(":")
                if (len(parts) != 4 or not parts[0].isdigit() or parts[2] != session
                        or parts[3] != lock_key or int(parts[0]) > key["ModifyIndex"]):
                    bad(f"{who}: CONCLAVE_LOCK_TOKEN {token!r} does not match {key}")
                else:
                    tokens.append(int(parts[0]))
    for index, count in collections.Counter(tokens).items():
        if count > 1:
            bad(f"{count} conclave grants share the token index {index}")

    # Intervals: sweep the starts and ends (an end before a start at the same instant).
    events = sorted([(h["start"], 1, h) for h in holds] + [(h["end"], -1, h) for h in holds],
                    key=lambda e: (e[0], e[1]))
    current, overlaps, most = set(), 0, 0
    for _, step, h in events:
        if step < 0:
            current.discard(h["name"])
            continue
        current.add(h["name"])
        most = max(most, len(current))
        if len(current) > limit:
            overlaps += 1
            bad(f"{len(current)} holds at once: {sorted(current)}")

    ordered = sorted(holds, key=lambda h: h["start"])
    kinds = collections.Counter(kind_of(h["name"]) for h in holds)
    handovers = collections.Counter((kind_of(a["name"]), kind_of(b["name"]))
                                    for a, b in zip(ordered, ordered[1:]))
    granted = [h for h in ordered if "grant" in h]  # lock mode, the key read as expected
    for a, b in zip(granted, granted[1:]):
        if a["grant"] >= b["grant"]:
            bad(f"fencing: {b['name']} (index {b['grant']}) held after {a['name']} "
                f"(index {a['grant']})")
    for k in ("conclave", "consul"):
        if kinds[k] == 0:
            bad(f"no hold by {k} lock")
    if limit == 1:
        for pair in (("conclave", "consul"), ("consul", "conclave")):
            if handovers[pair] == 0:
                bad(f"no {pair[1]} hold right after a {pair[0]} hold")
        detail = (f"conclave->consul={handovers[('conclave', 'consul')]} "
                  f"consul->conclave={handovers[('consul', 'conclave')]}")
    else:
        # That the semaphore admitted LIMIT holders at once, of both kinds, is seen in the
        # holder sets read during the holds (robust to scheduling, unlike the intervals,
        # which start only once Python has started).
        kind_of_session = {h["sessions"][0]: kind_of(h["name"])
                           for h in holds if len(h.get("sessions", [])) == 1}
        full = sum(1 for hs in holder_sets if len(hs) == limit)
        mixed = sum(1 for hs in holder_sets
                    if {kind_of_session.get(s) for s in hs} >= {"conclave", "consul"})
        if full == 0:
            bad(f"no hold saw {limit} holders in {lock_key}")
        if mixed == 0:
            bad(f"no hold saw a conclave and a consul lock holder in {lock_key} together")
        detail = f"full={full} mixed={mixed} most_at_once={most}"

    print(f"{mode}: runs={len(runs)} holds={len(holds)} conclave={kinds['conclave']} "
          f"consul={kinds['consul']} {detail} overlaps={overlaps}")
    return len(holds), kinds, overlaps


def check_leftovers(work, modes, problems):
    """Sessions still there after their lock command exited (checked after each run) or at
    the end, and keys left under the prefixes at the end. A session is conclave's or consul
    lock's by its name. consul lock's are reported, not failed: api.Lock and api.Semaphore
    destroy their session from the renewal goroutine once released (Unlock/Release close
    its channel), and the command exits right after its cleanup without waiting for that
    goroutine, so now and then the session outlives the process, until Consul expires it
    (TTL 15 s; Consul allows up to twice that). It holds nothing by then."""
    found = [(line, "after its command exited") for m in modes
             for line in lines(f"{work}/{m}.leftovers")]
    found += [(line, "at the end") for line in lines(f"{work}/final.leftovers")]
    leaked, consul_sessions = set(), set()
    for line, when in found:
        what = line.split(" ", 2)
        if what[0] == "session" and kind_of(what[2]) == "consul":
            if what[1] not in consul_sessions:
                print(f"note: consul lock left its session behind ({when}): {what[2]} {what[1]}")
            consul_sessions.add(what[1])
            continue
        if what[0] in ("session", "key") and len(what) == 3:
            leaked.add((what[0], what[1]))
        else:
            leaked.add(("?", line))
        problems.append(f"left behind {when}: {line}")
    return len(leaked), len(consul_sessions)


def main():
    work, tag, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    problems = []
    total, kinds, overlaps, modes = 0, collections.Counter(), 0, []
    for spec in specs:
        mode, limit = spec.split(":")
        n, k, o = check_mode(work, tag, mode, int(limit), problems)
        total, overlaps = total + n, overlaps + o
        kinds.update(k)
        modes.append(mode)
    leaked, consul_sessions = check_leftovers(work, modes, problems)
    for p in problems[:30]:
        print("FAIL", p)
    if len(problems) > 30:
        print(f"FAIL ... and {len(problems) - 30} more")
    print(f"holds={total} conclave={kinds['conclave']} consul={kinds['consul']} "
          f"overlaps={overlaps} leaked={leaked} consul_lock_sessions_left={consul_sessions}")
    return 1 if problems else 0


sys.exit(main())
