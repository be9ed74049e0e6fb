#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""The command that every contender of consul_lock.sh runs while it holds the lock or a
semaphore slot (started by `conclave lock` or by `consul lock`, so everything it does happens
inside the hold).

    hold.py LIMIT PREFIX LOG   (environment: HOLD_NAME, CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN)

It records what it observes, and judges nothing (check.py does): one JSON line appended to
LOG with the start and end of the hold on CLOCK_MONOTONIC, its session (the one whose name
is HOLD_NAME: the contender gave it that name with -name), the lock key `PREFIX/.lock` as
read during the hold, the contender key `PREFIX/<session>` for a semaphore, and
CONCLAVE_LOCK_TOKEN when conclave started it. `start` is taken before anything else and
`end` after everything else, so [start, end] lies inside the hold.

CLOCK_MONOTONIC (Python's time.monotonic_ns) is one clock for every process of the
machine, with nanosecond resolution, and NTP or an operator setting the time cannot move
it backwards; `date +%s%N` (the wall clock) could, and /proc/uptime has 10 ms steps.
"""
import base64
import json
import os
import random
import sys
import time

from consul_http import connect, get


def key_entry(conn, key):
    entries = get(conn, f"/v1/kv/{key}?consistent")
    if not entries:
        return None
    e = entries[0]
    value = base64.b64decode(e["Value"]).decode() if e.get("Value") else ""
    return {"Flags": e["Flags"], "LockIndex": e["LockIndex"], "ModifyIndex": e["ModifyIndex"],
            "Session": e.get("Session", ""), "Value": value}


def main():
    start = time.monotonic_ns()
    limit, prefix, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    name = os.environ["HOLD_NAME"]
    record = {"name": name, "token": os.environ.get("CONCLAVE_LOCK_TOKEN")}
    try:
        conn = connect()
        # ?consistent: read what the leader has committed, even through a follower.
        sessions = [s["ID"] for s in get(conn, "/v1/session/list?consistent") or []
                    if s["Name"] == name]
        record["sessions"] = sessions
        record["lock"] = key_entry(conn, prefix + "/.lock")
        if limit > 1 and len(sessions) == 1:
            record["contender"] = key_entry(conn, prefix + "/" + sessions[0])
        conn.close()
        # Hold for some tens of milliseconds: long against Python's own start (which is
        # inside the hold but before `start`), so that a semaphore's holds overlap often
        # and a lock's come close to each other.
        time.sleep(random.uniform(0.05, 0.15))
    except Exception as e:  # recorded; check.py fails the run on it
        record["error"] = str(e)
    record["start"] = start
    record["end"] = time.monotonic_ns()
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, (json.dumps(record) + "\n").encode())  # one write: lines never interleave
    os.close(fd)


main()
