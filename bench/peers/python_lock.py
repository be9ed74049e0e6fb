#!/usr/bin/python3
# SPDX-License-Identifier: BSL-1.0
"""The contend loop written with python-consul (Debian's python3-consul), run by
conclave-bench as a peer on the same agent.

Each contender is a thread with its own Consul client and session, as separate services
would be: PUT ?acquire; when refused, blocking GETs of the key until it has no holder, then
try again; hold; PUT ?release. Timestamps are CLOCK_MONOTONIC (time.monotonic_ns), the
clock conclave-bench uses, so the harness computes handoffs and fairness the same way for
every implementation. Output: one JSON line per grant, then a summary line.

Runs with /usr/bin/python3 (the Debian package installs there, not into other Pythons).
"""
import argparse
import json
import resource
import sys
import threading
import time

import consul

LOCK_FLAGS = 3304740253564472344  # Go api.Lock's flags, as conclave writes them


def cpu_us():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return int((ru.ru_utime + ru.ru_stime) * 1e6)


def sleep_until(t_ns):
    left = t_ns - time.monotonic_ns()
    if left > 0:
        time.sleep(left / 1e9)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", required=True)
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--contenders", type=int, default=1)
    ap.add_argument("--keys", type=int, default=1)
    # The window, from the moment every contender has its session: the contenders start
    # LEAD after it, the measurement begins WARMUP later and lasts DURATION.
    ap.add_argument("--lead-ns", type=int, required=True)
    ap.add_argument("--warmup-ns", type=int, required=True)
    ap.add_argument("--duration-ns", type=int, required=True)
    ap.add_argument("--hold-us", type=int, default=0)
    a = ap.parse_args()
    host, port = a.addr.rsplit(":", 1)

    grants = []  # list.append is atomic under the GIL
    errors = []
    cpu = {}
    window = {}
    ready = threading.Barrier(a.contenders + 1)  # the contenders' sessions, and main
    go = threading.Event()

    def sample(name, at):
        sleep_until(at)
        cpu[name] = cpu_us()

    def contender(i):
        try:
            c = consul.Consul(host=host, port=int(port))
            try:
                sid = c.session.create(name="bench-python", lock_delay=0, checks=[], ttl=60)
            finally:
                ready.wait()
            key = "%s/k%d" % (a.prefix, i % a.keys)
            go.wait()
            sleep_until(window["start"])
            while time.monotonic_ns() < window["t1"]:
                start = time.monotonic_ns()
                index = None
                while not c.kv.put(key, "python", acquire=sid, flags=LOCK_FLAGS):
                    # Held: wait for a change, until nobody holds it.
                    index, entry = c.kv.get(key, index=index, wait="15s")
                    while entry is not None and entry.get("Session"):
                        index, entry = c.kv.get(key, index=index, wait="15s")
                acquired = time.monotonic_ns()
                if a.hold_us:
                    time.sleep(a.hold_us / 1e6)
                c.kv.put(key, "python", release=sid, flags=LOCK_FLAGS)
                released = time.monotonic_ns()
                grants.append((i, i % a.keys, start, acquired, released))
            c.session.destroy(sid)
        except Exception as e:  # reported in the summary; the harness fails the run
            errors.append("%s: %s" % (type(e).__name__, e))

    threads = [threading.Thread(target=contender, args=(i,)) for i in range(a.contenders)]
    for t in threads:
        t.start()
    # Every session created (or failed): the window starts now, however long the interpreter,
    # its imports and the sessions took, and the harness learns it from the first line.
    ready.wait()
    window["start"] = time.monotonic_ns() + a.lead_ns
    window["t0"] = window["start"] + a.warmup_ns
    window["t1"] = window["t0"] + a.duration_ns
    out = sys.stdout
    out.write(json.dumps({"window": [window["start"], window["t0"], window["t1"]]}) + "\n")
    out.flush()
    go.set()
    samplers = [threading.Thread(target=sample, args=(n, window[n])) for n in ("t0", "t1")]
    for t in samplers:
        t.start()
    for t in samplers + threads:
        t.join()
    for g in grants:
        out.write(json.dumps({"grant": list(g)}) + "\n")
    summary = {"cpu_us": cpu.get("t1", 0) - cpu.get("t0", 0), "grants": len(grants),
               "impl": "python-consul " + getattr(consul, "__version__", "?")}
    if errors:
        summary["error"] = errors[0]
    out.write(json.dumps({"summary": summary}) + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
