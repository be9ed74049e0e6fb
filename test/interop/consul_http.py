# SPDX-License-Identifier: BSL-1.0
"""Reads from the Consul agent that CONSUL_HTTP_ADDR names (with CONSUL_HTTP_TOKEN), for the
interop scripts: plain HTTP, JSON replies."""
import http.client
import json
import os


def connect():
    return http.client.HTTPConnection(os.environ["CONSUL_HTTP_ADDR"].removeprefix("http://"),
                                      timeout=10)


def get(conn, path):
    """The decoded reply; None for a 404 (a missing key, nothing under a prefix)."""
    token = os.environ.get("CONSUL_HTTP_TOKEN")
    conn.request("GET", path, headers={"X-Consul-Token": token} if token else {})
    reply = conn.getresponse()
    body = reply.read()
    if reply.status == 404:
        return None
    if reply.status != 200:
        raise RuntimeError(f"GET {path}: HTTP {reply.status} {body[:200]!r}")
    return json.loads(body)
