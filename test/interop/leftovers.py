#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Prints what a lock command left behind in Consul, one line each (nothing when clean):

    leftovers.py NAME [PREFIX ...]   (environment: CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN)

`session <id> <name>` for each session whose name is NAME or starts with NAME + "/", and
`key <key> <session>` for each key under each PREFIX. consul_lock.sh runs it after every
lock command has exited (NAME is that command's -name: whatever of its session remains now
was left behind, since no process of its own is left to destroy it) and once at the end
(NAME is the run's tag, PREFIX each mode's prefix). Exits non-zero only when Consul cannot
be read.
"""
import http.client
import json
import os
import sys


def get(conn, path):
    token = os.environ.get("CONSUL_HTTP_TOKEN")
    conn.request("GET", path, headers={"X-Consul-Token": token} if token else {})
    reply = conn.getresponse()
    body = reply.read()
    if reply.status == 404:
        return []
    if reply.status != 200:
        raise RuntimeError(f"GET {path}: HTTP {reply.status} {body[:200]!r}")
    return json.loads(body)


def main():
    name, prefixes = sys.argv[1], sys.argv[2:]
    conn = http.client.HTTPConnection(os.environ["CONSUL_HTTP_ADDR"].removeprefix("http://"),
                                      timeout=10)
    for s in get(conn, "/v1/session/list?consistent"):
        if s["Name"] == name or s["Name"].startswith(name + "/"):
            print("session", s["ID"], s["Name"])
    for prefix in prefixes:
        for e in get(conn, f"/v1/kv/{prefix}/?recurse&consistent"):
            print("key", e["Key"], e.get("Session") or "-")


main()
