#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""The command every contender of chaos.py runs while `conclave lock` holds the lock: it
writes to the fenced store (fence.py) with its grant's token and records what happened.

    conclave lock ... <prefix> python3 -S hold.py

Environment: CONCLAVE_LOCK_TOKEN (from conclave lock), CHAOS_RUN (this run's id),
CHAOS_STORE (the store's unix socket), CHAOS_HOLDS (the log), CHAOS_WRITES (how many
writes, default 3), CHAOS_EPOCH (only on the dev agent: a file "<epoch> <host:port>" the
driver rewrites before each restart), CHAOS_OP (WRITE, the default, or READ: a `conclave
lock -shared` holder reads through the fence instead of writing; see fence.py).

It appends two JSON lines to CHAOS_HOLDS: {"event": "start"} first thing, and {"event":
"end"} last, with `start` and `end` on CLOCK_MONOTONIC (so [start, end] covers everything
it did, including each write's [t0, t1] and answer). It judges nothing (check.py does).

SIGTERM or SIGINT (conclave lock forwards a loss or an interruption that way) ends the
writes early, but the hold then makes one last write with the same token, as a process
that flushes its buffers on the way out would: when the lock was lost to a newer holder,
the store must refuse it. A hold paused with SIGSTOP long enough for its session to expire
does the same at its next write.

Epoch: a dev agent restart forgets every session and starts its indexes again, so tokens
of different agent lifetimes cannot be compared by index. On the dev agent the hold asks
the agent (directly, not through the fault proxy) whether its session exists, between two
reads of CHAOS_EPOCH: when both reads agree and the session exists, the token is of that
epoch; otherwise -1, which the store ranks below every known epoch.
"""
import signal

signal.signal(signal.SIGINT, signal.SIG_DFL)  # until main(): die quietly, no traceback

import ctypes  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402


class Interrupted(Exception):
    pass


def on_signal(signum, _frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise Interrupted(signal.Signals(signum).name)


def append(path, record):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, (json.dumps(record) + "\n").encode())  # one write: lines never interleave
    os.close(fd)


def read_epoch(path):
    with open(path) as f:
        epoch, address = f.read().split()
    return int(epoch), address


def session_exists(address, session):
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=2) as s:
        s.sendall(f"GET /v1/session/info/{session} HTTP/1.1\r\nHost: {address}\r\n"
                  "Connection: close\r\n\r\n".encode())
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    return reply.startswith(b"HTTP/1.1 200") and session.encode() in reply.split(b"\r\n\r\n", 1)[-1]


def epoch_of(token):
    path = os.environ.get("CHAOS_EPOCH")
    if not path:
        return 0
    try:
        first, address = read_epoch(path)
        exists = session_exists(address, token.split(":")[2])
        second, _ = read_epoch(path)
    except (OSError, ValueError, IndexError):
        return -1
    return first if exists and first == second else -1


class Store:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")

    def call(self, line):
        self.sock.sendall((line + "\n").encode())
        return self.file.readline().decode().strip() or "?"


def main():
    start = time.monotonic_ns()
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with conclave lock
    env = os.environ
    run, log, token = env["CHAOS_RUN"], env["CHAOS_HOLDS"], env.get("CONCLAVE_LOCK_TOKEN", "")
    op = env.get("CHAOS_OP", "WRITE")
    record = {"event": "end", "run": run, "start": start, "token": token, "pid": os.getpid(),
              "epoch": None, "writes": []}
    append(log, {"event": "start", "run": run, "start": start, "token": token,
                 "pid": os.getpid()})

    def write(store, final):
        t0 = time.monotonic_ns()
        answer = "?"
        try:
            answer = store.call(f"{op} {record['epoch']} {token} {run}")
        finally:
            record["writes"].append({"t0": t0, "t1": time.monotonic_ns(), "answer": answer,
                                     "final": final})

    # Before this, a SIGTERM kills the hold at once: a start line without an end line.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        hold(env, run, token, record, write)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    except Interrupted as e:  # after the writes: nothing left to do
        record.setdefault("signal", str(e))
    record["end"] = time.monotonic_ns()
    append(log, record)


def hold(env, run, token, record, write):
    try:
        # The epoch first: the driver may pause the hold once it has said BEGIN, and a
        # session looked up after a long pause would be gone (epoch unknown).
        record["epoch"] = epoch_of(token)
        store = Store(env["CHAOS_STORE"])
        store.call(f"BEGIN {run} {os.getpgid(0)} {token}")
        for i in range(int(env.get("CHAOS_WRITES", "3"))):
            if i:
                time.sleep(random.uniform(0.005, 0.03))
            write(store, False)
        store.call(f"END {run}")
    except Interrupted as e:
        record["signal"] = str(e)
        try:
            if record["epoch"] is None:
                record["epoch"] = -1
            write(Store(env["CHAOS_STORE"]), True)
        except OSError as e2:
            record["error"] = f"final write: {e2}"
    except OSError as e:
        record["error"] = str(e)


main()
