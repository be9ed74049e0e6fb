#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Smoke test of conclave-bench: runs one scenario with tiny parameters and checks that its
--json output has the fields docs/benchmarks.md promises. Registered per scenario in
bench/CMakeLists.txt (label "bench"); keeps the harness working in CI, measures nothing.

usage: smoke_test.py CONCLAVE_BENCH SCENARIO [OPTION...]

OPTIONs go to conclave-bench after the tiny sizes (for example `--agent consul --consul-bin
PATH`: the same checks on a real Consul).
"""
import json
import subprocess
import sys

TINY = ["--duration", "0.3", "--contenders", "2", "--waiters", "40", "--watchers", "2",
        "--repeat", "1", "--ttl-ms", "200", "--lock-delay-ms", "0", "--json", "--quiet"]

COMMON = ["scenario", "contenders", "ops_per_s", "p50_us", "p99_us", "max_us", "cpu_us_per_op"]
EXTRA = {
    "contend": ["requests_per_handoff", "acquire_attempts_per_handoff", "jain"],
    "cycle": ["requests_per_handoff", "rate_vs_rtt", "write_ops_per_s", "rate_vs_write"],
    "write": ["client_requests_per_op"],
    "semaphore": ["requests_per_handoff", "jain"],
    "drain": ["total_ms", "bound_ms", "requests_per_handoff", "jain"],
    "failover": ["failover_ms", "bound_ms"],
    "handover": ["idle_rtt_p50_us", "handover_rtts_p50"],
    "scale": ["bytes_per_waiter", "requests_per_handoff"],
    "watch": [],
    "keys": ["within_1s", "undelivered_after_30s", "connects", "refused_connects", "errors"],
    "rtt": [],
    "peers": ["requests_per_handoff", "jain"],
    "multilock": ["keys", "requests_per_handoff", "jain"],
    "rwlock": ["readers", "writers", "requests_per_handoff", "jain", "grants_per_s",
               "writer_ops_per_s", "read_wait_p50_us", "max_readers_together",
               "exclusion_violations"],
}
# Runs that need more than the defaults to show their shape.
ARGS = {"contend-processes": ["contend", "--processes", "2"],
        # Readers that hold 2 ms overlap: the read-write lock must let them, the plain
        # lock must not.
        "rwlock": ["rwlock", "--writers", "0,2", "--hold-us", "2000"]}
# "go": the cycle with Go's api.Lock peer beside it (bench/peers/go_peer.hpp), when this machine
# has one; every other run leaves it out.
GO_ARGS = ["cycle"]
# Fields from a dev agent's request counters; a real Consul has none, and the client's own
# count stands in for them.
AGENT_COUNTERS = ("requests_per_handoff", "acquire_attempts_per_handoff")
# Peers not installed on this machine are reported, not failed (scripts/setup.sh installs them).
SKIPPABLE = ("is not installed", "no node_modules")


def main():
    exe, which, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    if which == "go":
        scenario_args = GO_ARGS
    else:
        scenario_args = ARGS.get(which, [which]) + ["--go", "none"]
    scenario = scenario_args[0]
    proc = subprocess.run([exe] + scenario_args + TINY + extra, capture_output=True, text=True,
                          timeout=120)
    sys.stderr.write(proc.stderr)
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if not records:
        sys.exit("no JSON records (exit %d)" % proc.returncode)
    skipped = []
    for r in records:
        print(json.dumps(r))
        err = r.get("error")
        if err:
            if any(s in err for s in SKIPPABLE):
                skipped.append(err)
                continue
            sys.exit("%s: error: %s" % (which, err))
        if r.get("variant") == "renewals":
            # The scenario's session renewals, from the library's observer.
            for f in ("renewals", "renew_failures"):
                if not isinstance(r.get(f), (int, float)) or r[f] < 0:
                    sys.exit("%s: renewals record: bad %s: %r" % (which, f, r.get(f)))
            if r["renewals"] > 0 and not r.get("p50_us", 0) > 0:
                sys.exit("%s: renewals record without latency" % which)
            continue
        want = COMMON + EXTRA.get(scenario, [])
        if scenario == "failover" and r.get("variant") == "resign":
            want = want + ["idle_rtt_p50_us", "handoff_rtts", "handoff_rtts_vs_rtt_loop"]
        if scenario == "peers" and r.get("impl") != "conclave":
            want = COMMON + EXTRA["peers"]
        if r.get("impl") == "go-api":
            want = COMMON + ["ours_ops_ratio", "ours_cpu_advantage"]
        if r.get("agent") not in ("process", "embedded"):
            want = [f for f in want if f not in AGENT_COUNTERS]
            if scenario in ("write", "cycle", "contend", "drain", "semaphore", "multilock",
                            "rwlock"):
                want.append("client_requests_per_op")
        missing = [f for f in want if f not in r]
        if missing:
            sys.exit("%s: record lacks %s" % (which, ", ".join(missing)))
        for f in want[1:]:
            if not isinstance(r[f], (int, float)) or r[f] < 0:
                sys.exit("%s: %s is not a non-negative number: %r" % (which, f, r[f]))
        expected = "contend" if scenario == "peers" else scenario
        if r["scenario"] != expected:
            sys.exit("%s: unexpected scenario %r" % (which, r["scenario"]))
        if r["ops_per_s"] <= 0 and scenario != "failover":
            sys.exit("%s: nothing measured" % which)
    if proc.returncode != 0:
        sys.exit("conclave-bench exited with %d" % proc.returncode)
    if scenario == "failover":
        seen = {r.get("variant") for r in records}
        for variant in ("crash", "crash-health", "resign"):
            if variant not in seen and not skipped:
                sys.exit("failover: no %s record" % variant)
    if scenario == "multilock":
        seen = {r.get("variant") for r in records}
        for variant in ("multi_lock", "locks-in-order"):
            if variant not in seen:
                sys.exit("multilock: no %s record" % variant)
    if scenario == "rwlock":
        runs = [r for r in records if r.get("part")]
        seen = {(r.get("part"), r.get("variant")) for r in runs}
        for part in ("read-rate", "writer-wait"):
            for variant in ("read_write_lock", "plain-lock"):
                if (part, variant) not in seen:
                    sys.exit("rwlock: no %s %s record" % (part, variant))
        for r in runs:
            if r["exclusion_violations"] != 0:
                sys.exit("rwlock: %s %s W=%d: a writer held beside someone, or two plain "
                         "locks at once" % (r["part"], r["variant"], r["writers"]))
            if r["writers"] > 0 and not r.get("writer_ops_per_s", 0) > 0:
                sys.exit("rwlock: %s %s W=%d: no writer got the lock"
                         % (r["part"], r["variant"], r["writers"]))
            alone = r["part"] == "read-rate" and r["writers"] == 0
            if alone and r["variant"] == "read_write_lock" and r["max_readers_together"] < 2:
                sys.exit("rwlock: readers never held together")
            if r["variant"] == "plain-lock" and r["max_readers_together"] > 1:
                sys.exit("rwlock: two plain-lock holders at once")
    if which == "go" and not any(r.get("impl") == "go-api" for r in records):
        skipped.append("no Go peer on this machine (--go, $GOLOCK or ../shared/peers/go-api)")
    if skipped:
        print("CONCLAVE-SKIPPED: " + "; ".join(skipped))


if __name__ == "__main__":
    main()
