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
import sys

from consul_http import connect, get


def main():
    name, prefixes = sys.argv[1], sys.argv[2:]
    conn = connect()
    for s in get(conn, "/v1/session/list?consistent") or []:
        if s["Name"] == name or s["Name"].startswith(name + "/"):
            print("session", s["ID"], s["Name"])
    for prefix in prefixes:
        for e in get(conn, f"/v1/kv/{prefix}/?recurse&consistent") or []:
            print("key", e["Key"], e.get("Session") or "-")


main()
