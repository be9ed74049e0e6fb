#!/usr/bin/env python3
"""Replays one golden transcript against a fresh `conclave agent -dev`.

    run_golden.py --agent build/cli/conclave --golden test/golden --scenario kv_raw

Starts the agent on 127.0.0.1:0 (session_ttl_min 1s, as the recording agent), reads the
port from its first stdout line, runs `golden.py replay ... --only <scenario>`, stops the
agent, and exits 0 only if exactly that scenario ran and passed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import threading

LISTEN_RE = re.compile(r"listening on (\S+):(\d+)")


def read_first_line(stream, timeout_s: float) -> str | None:
    box: dict[str, str] = {}

    def reader():
        box["line"] = stream.readline()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t.join(timeout_s)
    return box.get("line")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True, help="the conclave executable")
    ap.add_argument("--golden", required=True, help="directory of golden JSON files")
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--extra-agent-args", default="", help="space-separated extra agent flags")
    args = ap.parse_args()

    cmd = [args.agent, "agent", "-dev", "-http-addr", "127.0.0.1:0", "-session-ttl-min", "1s"]
    cmd += [a for a in args.extra_agent_args.split() if a]
    agent = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        status = replay(agent, args)
    finally:
        agent.terminate()
        try:
            agent.wait(timeout=10)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.wait()
    err = agent.stderr.read() if agent.stderr else ""
    if agent.returncode != 0:
        # A clean SIGTERM shutdown exits 0; anything else (a crash, a sanitizer report)
        # fails the test.
        print(f"agent exited with {agent.returncode}:\n{err}", file=sys.stderr)
        status = 1
    return status


def replay(agent: subprocess.Popen, args) -> int:
    line = read_first_line(agent.stdout, 15.0)
    m = LISTEN_RE.search(line or "")
    if not m:
        print(f"agent did not report its address (got {line!r})", file=sys.stderr)
        return 1
    base = f"http://{m.group(1)}:{m.group(2)}"
    golden_py = os.path.join(args.golden, "golden.py")
    rep = subprocess.run(
        [sys.executable, golden_py, "replay", "--base", base, "--golden", args.golden,
         "--only", args.scenario],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    sys.stdout.write(rep.stdout)
    if rep.returncode != 0:
        return 1
    if not re.search(r"^1 passed, 0 failed$", rep.stdout, re.M):
        print(f"scenario {args.scenario!r} did not run", file=sys.stderr)
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
