#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Judges the history of a chaos run (chaos.py writes it; nothing here talks to Consul):

    check.py WORK      reads WORK/{runs,holds,fence,events,leaks}.jsonl and WORK/meta.json

`check(history)` is a pure function over the same records, for the unit tests
(check_test.py). It returns a Report; `Report.lines()` is what is printed, ending with
`handoffs=N faults=M violations=V leaked=L`.

The records (times on CLOCK_MONOTONIC in ns, one clock for every process of the machine):

- runs: one per `conclave lock` run: run id, key (`<prefix>/.lock`; `<prefix>` for a
  read-write lock, the key its tokens name), mode (absent or "plain"; "shared" or
  "exclusive" for `-shared` and `-exclusive` runs), status, stderr (-verbose).
- holds: hold.py's `start` and `end` lines: token, epoch, [start, end], each write's
  [t0, t1] and answer (OK, STALE, ? when cut short), the signal that ended it early.
- fence: the store's decisions in the order it took them: run, key, epoch, index, ok, t,
  op ("write", or "read" from a -shared holder: judged against the writes, changes nothing).
- events: the driver's pauses ({"kind": "pause", "run", "t0", "t1"}: the hold of that run
  and its conclave lock were stopped from t0 to t1), hangs ({"kind": "hang", "run", "t0",
  "t1"}: the hold's command alone was stopped at t0 and its session destroyed; it was gone,
  killed by conclave lock, at t1: the hold lasts until then) and server restarts ({"kind":
  "restart", "t0", "t1", "loses_state", "epoch"}: down at t0, up again at t1; a dev agent
  comes back empty, its life numbered `epoch`).
- leaks: sessions and keys of the run found on the server when they should be gone.

Violations (each must be 0):

- overlap: two holds of one key whose intervals overlap (for a read-write lock: not both
  -shared, whose overlaps are allowed and counted, shared_overlaps), unless explained: one
  of them was paused since before the overlap began (its session expired while it was
  stopped; it learns that on resuming), or their grants came from different lives of a dev
  agent (a restart forgot the first lock): one hold's epoch is that of an agent started
  after the other's grant, which came from the agent killed (it started before the kill,
  or could not find its session afterwards).
- fencing: the store accepted a write or a read below the highest write it had accepted
  for that key (its own log), or a hold got OK (for a write or a read) after another hold
  had got OK for a write with a higher token (the holds' records, an independent view of
  the same thing). -shared holders only read: a reader's token is below that of every
  writer that came after it, so a read accepted below a write is a reader that overlapped
  a later writer. Stale writes refused are the fence working: they are counted, by what
  explains them (stale_pause: a paused hold, refused by its index; stale_restart,
  stale_unknown_epoch: around dev agent restarts; stale_read_*: the readers' reads).
- grant order: a hold that started after another hold of the key had ended has a token not
  above it (same epoch): later grants must have larger modify indexes. Not between two
  -shared holds: a reader in line before another may notice that it holds later.
- cancelled: a run that reported it gave up acquiring (timeout, interruption, failure) but
  started its command or wrote.

Other problems (also a failure, not counted as violations): holds of unknown runs, tokens
that do not match the run's key or its "Lock acquired (<token>)" line, holds that could
not reach the store, fewer handoffs than the run's minimum.
"""
import bisect
import collections
import json
import os
import sys

# What `conclave lock` prints when it never held the lock (its -verbose output otherwise
# contains "Lock acquired (<token>)").
NOT_ACQUIRED = ("Timeout during lock acquisition", "Shutdown triggered during lock acquisition",
                "Shutdown triggered before lock acquisition", "Lock acquisition failed",
                "Error querying Consul agent", "Error connecting to Consul agent")


class Report:
    def __init__(self):
        self.violations = []   # text
        self.leaks = []
        self.problems = []
        self.counts = collections.Counter()
        self.handoffs = 0
        self.faults = 0

    def lines(self, limit=40):
        out = [f"{k}={v}" for k, v in sorted(self.counts.items())]
        out = ["counts: " + " ".join(out)] if out else []
        for kind, items in (("VIOLATION", self.violations), ("LEAK", self.leaks),
                            ("FAIL", self.problems)):
            out += [f"{kind} {text}" for text in items[:limit]]
            if len(items) > limit:
                out.append(f"{kind} ... and {len(items) - limit} more")
        out.append(f"handoffs={self.handoffs} faults={self.faults} "
                   f"violations={len(self.violations)} leaked={len(self.leaks)}")
        return out

    def ok(self):
        return not (self.violations or self.leaks or self.problems)


def parse_token(token):
    """(index, session, key) of CONCLAVE_LOCK_TOKEN, or None."""
    parts = (token or "").split(":", 3)
    if len(parts) != 4 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    # A read-write grant's token names its contender key, `<prefix>/.rwlock/<session>.<n>`:
    # its lock is `<prefix>`.
    return int(parts[0]), parts[2], parts[3].split("/.rwlock/", 1)[0]


def assemble_holds(lines, decisions, report):
    """One dict per hold (by run id) from hold.py's start and end lines. A hold killed
    before its end line ends at its last decision in the store's log."""
    holds = {}
    for line in lines:
        h = holds.setdefault(line["run"], {"run": line["run"], "start": line["start"],
                                           "token": line["token"], "end": None, "writes": [],
                                           "epoch": None})
        if line["event"] == "end":
            h.update({k: line[k] for k in ("end", "writes", "epoch", "signal", "error")
                      if k in line})
    last_decision = {}
    for d in decisions:
        last_decision[d["run"]] = max(last_decision.get(d["run"], 0), d["t"])
    for h in holds.values():
        if h["end"] is None:
            h["unfinished"] = True
            h["end"] = max(h["start"], last_decision.get(h["run"], 0))
        parsed = parse_token(h["token"])
        if parsed is None:
            report.problems.append(f"{h['run']}: bad token {h['token']!r}")
            continue
        h["index"], h["session"], h["key"] = parsed
        epoch = h["epoch"] if h["epoch"] is not None else -1
        h["rank"] = (epoch, h["index"])
    return {run: h for run, h in holds.items() if "rank" in h}


def check_runs(runs, holds, decisions, report):
    written = {d["run"] for d in decisions}
    by_id = {r["run"]: r for r in runs}
    for r in runs:
        gave_up = next((m for m in NOT_ACQUIRED if m in r.get("stderr", "")), None)
        held = r["run"] in holds or r["run"] in written or "Lock acquired (" in r.get("stderr", "")
        report.counts["runs"] += 1
        report.counts[f"exit_{r['status']}"] += 1
        if gave_up:
            report.counts["runs_not_acquired"] += 1
            if held:
                report.violations.append(f"cancelled: {r['run']} reported '{gave_up}' "
                                         f"(status {r['status']}) but held or wrote")
    for run, h in holds.items():
        r = by_id.get(run)
        if r is None:
            report.problems.append(f"hold of unknown run {run}")
            continue
        if h["key"] != r["key"]:
            report.problems.append(f"{run}: token {h['token']} is not for {r['key']}")
        if f"Lock acquired ({h['token']})" not in r.get("stderr", ""):
            report.problems.append(f"{run}: its run did not report acquiring {h['token']}")
        if "error" in h:
            report.problems.append(f"{run}: hold error: {h['error']}")
        if h.get("unfinished") and r["status"] == 0:
            report.problems.append(f"{run}: hold has no end record, yet its run exited 0")


def may_predate(h, r):
    """Hold h's grant may come from the agent that restart r killed: h started before the
    kill, or it could not confirm its session (epoch -1) in a look taken after the kill
    (hold.py looks before its first write). A grant from the new agent is always
    confirmed: the driver names the new agent (epoch file) before the contenders can reach
    it."""
    if h["start"] < r["t0"]:
        return True
    first = min((w["t0"] for w in h["writes"]), default=h["end"])
    return h["rank"][0] < 0 and r["t0"] < first


def follows(h, r):
    """Hold h's grant certainly comes from the agent restart r started, or a later one."""
    return h["rank"][0] >= r["epoch"]


def explain_overlap(a, b, pauses, restarts):
    """Why holds a and b (a started first) may overlap: ('pause', the paused hold),
    ('restart', None) or (None, None)."""
    for h in (a, b):
        for p in pauses.get(h["run"], ()):
            if p["t0"] < h["end"] and p["t1"] > h["start"] and p["t0"] <= b["start"]:
                return "pause", h["run"]
    for r in restarts:
        if r.get("loses_state") and ((may_predate(a, r) and follows(b, r)) or
                                     (may_predate(b, r) and follows(a, r))):
            return "restart", None
    return None, None


def shared(h):
    return h.get("mode") == "shared"


def check_overlaps(by_key, pauses, restarts, report):
    overtaken = set()  # paused holds whose lock another hold took meanwhile
    for key, hs in by_key.items():
        active = []
        for b in sorted(hs, key=lambda h: h["start"]):
            active = [a for a in active if a["end"] > b["start"]]
            for a in active:
                if shared(a) and shared(b):
                    report.counts["shared_overlaps"] += 1
                    continue
                why, paused = explain_overlap(a, b, pauses, restarts)
                overtaken.add(paused)
                report.counts[f"overlaps_{why or 'unexplained'}"] += 1
                if why is None:
                    report.violations.append(
                        f"overlap: {a['run']} [{a['start']}, {a['end']}] token {a['token']} and "
                        f"{b['run']} [{b['start']}, {b['end']}] token {b['token']}")
            active.append(b)
    report.counts["paused_overtaken"] = len(overtaken - {None})


def check_store_log(decisions, report):
    highest = {}  # key -> (rank, run) of the highest write accepted
    for d in decisions:
        rank = (d["epoch"], d["index"])
        read = d.get("op") == "read"
        report.counts[("reads_" if read else "writes_") + ("ok" if d["ok"] else "stale")] += 1
        if not d["ok"]:
            continue
        if d["key"] in highest and rank < highest[d["key"]][0]:
            report.violations.append(
                f"fencing: store accepted {'a read of ' if read else ''}{d['run']} {rank} "
                f"after {highest[d['key']][1]} {highest[d['key']][0]} on {d['key']}")
        if not read and (d["key"] not in highest or rank > highest[d["key"]][0]):
            highest[d["key"]] = (rank, d["run"])


def check_hold_writes(by_key, report):
    """Holds' own view: no OK sent (t0) after another hold had received (t1) an OK for a
    write with a higher token of the same key (-shared holds only read: their OKs are
    judged, but set no bar)."""
    for key, hs in by_key.items():
        oks = [(w["t0"], w["t1"], h["rank"], h["run"], shared(h)) for h in hs
               for w in h["writes"] if w["answer"] == "OK"]
        by_t1 = sorted((w for w in oks if not w[4]), key=lambda w: w[1])  # the writes
        best, i = None, 0   # highest (rank, run) received before the current t0
        for t0, _t1, rank, run, _read in sorted(oks):
            while i < len(by_t1) and by_t1[i][1] < t0:
                if best is None or by_t1[i][2] > best[0]:
                    best = (by_t1[i][2], by_t1[i][3])
                i += 1
            if best is not None and rank < best[0]:
                report.violations.append(f"fencing: {run} {rank} got OK after {best[1]} "
                                         f"{best[0]} had on {key}")


def check_grant_order(by_key, report):
    """Disjoint holds of one epoch: the later one has the larger index (unless both are
    -shared)."""
    for key, hs in by_key.items():
        known = [h for h in hs if h["rank"][0] >= 0]
        ends = sorted((h["end"], h["rank"], h["run"], shared(h)) for h in known)
        best = {}   # epoch -> (index, run) highest among holds ended so far
        best_not_shared = {}  # the same among those that were not -shared
        i = 0
        for b in sorted(known, key=lambda h: h["start"]):
            while i < len(ends) and ends[i][0] <= b["start"]:
                (epoch, index), run, was_shared = ends[i][1], ends[i][2], ends[i][3]
                for table in (best,) if was_shared else (best, best_not_shared):
                    if epoch not in table or index > table[epoch][0]:
                        table[epoch] = (index, run)
                i += 1
            prior = (best_not_shared if shared(b) else best).get(b["rank"][0])
            if prior and b["index"] <= prior[0]:
                report.violations.append(f"grant order: {b['run']} (index {b['index']}) "
                                         f"started after {prior[1]} (index {prior[0]}) ended")


def classify_stale(decisions, holds, pauses, restarts, report):
    """What explains each refused write: the hold was paused (a newer grant of the same
    epoch had written), a dev agent restart (a newer epoch had written), the hold could not
    tell its epoch (-1: around a restart), or it was signalled (its lock lost otherwise)."""
    lost_state = [r for r in restarts if r.get("loses_state")]
    for d in decisions:
        if d["ok"]:
            continue
        h = holds.get(d["run"])
        if d["epoch"] < 0:
            why = "unknown_epoch"
        elif h and any(h["start"] < r["t0"] < d["t"] for r in lost_state):
            why = "restart"
        elif d["run"] in pauses:
            why = "pause"
        elif h and h.get("signal"):
            why = "signalled"
        else:
            why = "other"
        report.counts[f"stale_{'read_' if d.get('op') == 'read' else ''}{why}"] += 1


def check(history):
    """history: dict with runs, holds, fence, events, leaks (lists of records), faults,
    min_handoffs."""
    report = Report()
    decisions = history["fence"]
    holds = assemble_holds(history["holds"], decisions, report)
    events = history["events"]
    pauses = collections.defaultdict(list)
    for e in events:
        if e["kind"] == "pause":
            pauses[e["run"]].append(e)
    restarts = [e for e in events if e["kind"] == "restart"]
    for e in events:
        if e["kind"] == "hang" and e["run"] in holds:  # alive, holding its token, until t1
            h = holds[e["run"]]
            h["end"] = max(h["end"], e["t1"])
            report.counts["hangs"] += 1
    report.counts["pauses"] = sum(len(p) for p in pauses.values())
    report.counts["restarts"] = len(restarts)

    modes = {r["run"]: r.get("mode", "plain") for r in history["runs"]}
    by_key = collections.defaultdict(list)
    for h in holds.values():
        h["mode"] = modes.get(h["run"], "plain")
        by_key[h["key"]].append(h)
    check_runs(history["runs"], holds, decisions, report)
    check_overlaps(by_key, pauses, restarts, report)
    check_store_log(decisions, report)
    check_hold_writes(by_key, report)
    check_grant_order(by_key, report)
    classify_stale(decisions, holds, pauses, restarts, report)

    for leak in history["leaks"]:
        report.leaks.append(" ".join(f"{k}={v}" for k, v in leak.items()))
    report.handoffs = sum(1 for h in holds.values()
                          if not h.get("unfinished") and not h.get("signal")
                          and "error" not in h)
    report.faults = history.get("faults", 0)
    report.problems += history.get("problems", [])
    if report.handoffs < history.get("min_handoffs", 1):
        report.problems.append(f"only {report.handoffs} handoffs, fewer than the "
                               f"{history.get('min_handoffs', 1)} this run needs")
    return report


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def load(work):
    history = {name: read_jsonl(os.path.join(work, name + ".jsonl"))
               for name in ("runs", "holds", "fence", "events", "leaks")}
    meta_path = os.path.join(work, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            history.update(json.load(f))
    return history


def main():
    report = check(load(sys.argv[1]))
    for line in report.lines():
        print(line)
    return 0 if report.ok() else 1


if __name__ == "__main__":
    sys.exit(main())
