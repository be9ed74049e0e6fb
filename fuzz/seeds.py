#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Writes the fuzzers' seed corpora (fuzz/corpus/<target>/).

    fuzz/seeds.py GOLDEN_DIR

GOLDEN_DIR holds the golden HTTP transcripts (consul-golden/1 JSON files: requests and the
answers a real Consul 1.8 gave them, with placeholders for the key prefix, session IDs and
Raft indexes). Each scenario gives:

  fuzz_client_response  the answers, as Consul writes them on the wire (head, then the body,
                        indented as a dev-mode Consul writes it or compact; some chunked),
                        preceded by the selector byte of the request they answer and a
                        read size;
  fuzz_agent_request    the scenario's requests (up to 8), as Go's HTTP client writes them,
                        preceded by a write size and where the pieces of that size start
                        (the first request's); a blocking read (a GET with an index) ends
                        its connection: what follows is written on another one (CONNECTION,
                        the harness's separator), which may wake it. Session IDs are left as
                        {s1}..{s9} and blocking indexes as {ix}, which the harness fills in
                        (fuzz_agent_request.cpp).

A few hand-written seeds cover what the transcripts do not (the agent's self answer, a
semaphore record, chunked requests, the CLI's flags and durations). The output is
deterministic: run it again after changing it, and commit the corpus.
"""

import base64
import http.client
import json
import pathlib
import re
import sys
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"
PREFIX = "fz/"
SESSIONS = {f"s{i}": f"{i:08x}-5c1d-4e9a-8b1f-3d2c6a7e9f0{i % 10}" for i in range(11)}
UUID_OTHER = "c3f9a38c-1e2d-4b5a-9e0f-2a7b6c8d9e0f"
DATE = "Thu, 01 Jan 2026 00:00:00 GMT"
# fuzz_agent_request.cpp's separator: the bytes after it go on a new connection.
CONNECTION = b"\n--next-connection--\n"

# fuzz_client_response.cpp's reply_kind, in order.
KV_GET, KV_LIST, KV_KEYS, KV_RAW, WRITE, SESSION_CREATE, SESSION_LIST, TXN, LEADER, \
    AGENT_SELF, SEMAPHORE, SESSION_RENEW, SESSION_DESTROY = range(13)
READ_SIZES = [0, 0, 1, 13, 100]


def reply_kind(method, target):
    path, _, query = target.partition("?")
    params = urllib.parse.parse_qs(query, keep_blank_values=True)
    if path.startswith("/v1/kv/"):
        if method != "GET":
            return WRITE
        for flag, kind in (("recurse", KV_LIST), ("keys", KV_KEYS), ("raw", KV_RAW)):
            if flag in params:
                return kind
        return KV_GET
    if path == "/v1/session/create":
        return SESSION_CREATE
    if path.startswith("/v1/session/destroy/"):
        return SESSION_DESTROY
    if path.startswith("/v1/session/renew/"):
        return SESSION_RENEW
    if path.startswith("/v1/session/"):
        return SESSION_LIST
    if path == "/v1/txn":
        return TXN
    if path == "/v1/status/leader":
        return LEADER
    if path == "/v1/agent/self":
        return AGENT_SELF
    return None


def index_value(label):
    if isinstance(label, int):
        return label
    if label == "base":
        return 10
    if label == "pre":
        return 5
    m = re.fullmatch(r"i(\d+)", str(label))
    return 10 + int(m.group(1)) if m else 7


def fill_answer(text):
    """Placeholders of an answer: concrete values, as Consul sent them."""
    text = text.replace("{p}", PREFIX).replace("{q}", "fz").replace("{node}", "conclave-dev")
    text = re.sub(r"\{(s\d+)\}", lambda m: SESSIONS[m.group(1)], text)
    text = re.sub(r"\{(u\d+|uuid|sd)\}", UUID_OTHER, text)
    return re.sub(r"\bi(\d+)\b", lambda m: str(10 + int(m.group(1))), text)


def fill_request(text):
    """Placeholders of a request: concrete, except sessions and indexes (the harness's)."""
    text = text.replace("{p}", PREFIX).replace("{q}", "fz").replace("{node}", "conclave-dev")
    text = re.sub(r"\{s(\d+)\}", lambda m: "{s%d}" % min(max(int(m.group(1)), 1), 9), text)
    text = text.replace("{sd}", "{s2}").replace("{mi}", "{ix}").replace("{ix2}", "{ix}")
    text = text.replace("{ix3}", "{ix}").replace("{i}", "0")
    return re.sub(r"\{(u\d+|uuid)\}", UUID_OTHER, text)


def json_fix_indexes(obj):
    if isinstance(obj, dict):
        return {k: (index_value(v) if k.endswith("Index") and isinstance(v, (str, int)) and
                    not isinstance(v, bool) else json_fix_indexes(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [json_fix_indexes(x) for x in obj]
    return obj


def answer_bytes(expect, n):
    status = expect["status"]
    headers = []
    for name, value in expect.get("headers", {}).items():
        canon = "-".join(part.capitalize() for part in name.split("-"))
        if name == "x-consul-index":
            value = str(index_value(value))
        headers.append((canon, fill_answer(str(value))))
    if "json" in expect:
        body = json_fix_indexes(expect["json"])
        if n % 2 == 0:
            body = json.dumps(body, indent=4) + "\n" if isinstance(body, (dict, list)) else \
                json.dumps(body)
        else:
            body = json.dumps(body, separators=(",", ":"))
    else:
        body = str(expect.get("text", ""))
    body = fill_answer(body).encode()
    if not any(k == "Content-Type" for k, _ in headers) and body:
        headers.append(("Content-Type", "text/plain; charset=utf-8"))
    headers += [("Vary", "Accept-Encoding"), ("Date", DATE)]
    head = f"HTTP/1.1 {status} {http.client.responses.get(status, 'Unknown')}\r\n"
    if n % 5 == 4 and body:
        headers.append(("Transfer-Encoding", "chunked"))
        half = len(body) // 2
        chunks = [body[:half], body[half:]]
        body = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks if c) + b"0\r\n\r\n"
    else:
        headers.append(("Content-Length", str(len(body))))
    head += "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
    return head.encode() + body


def request_bytes(do, http10=False):
    target = fill_request(do["path"])
    body = b""
    if "json" in do:
        body = (json.dumps(do["json"], separators=(",", ":")) + "\n").encode()
    elif "fill" in do:
        body = (do["fill"]["char"] * do["fill"]["count"]).encode()
    elif "body" in do:
        body = do["body"].encode()
    body = fill_request(body.decode("utf-8", "replace")).encode()
    version = "HTTP/1.0" if http10 else "HTTP/1.1"
    head = f"{do['method']} {target} {version}\r\nHost: 127.0.0.1:8500\r\n"
    head += "User-Agent: Go-http-client/1.1\r\n"
    if body or do["method"] in ("PUT", "POST"):
        head += f"Content-Length: {len(body)}\r\n"
    if http10:
        head += "Connection: keep-alive\r\n"
    head += "Accept-Encoding: gzip\r\n\r\n"
    return head.encode() + body


def blocks(do):
    """Whether a request is a blocking read, which may wait for a later request."""
    return do["method"] == "GET" and re.search(r"[?&]index=", do["path"]) is not None


def write(target, name, data):
    d = ROOT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def from_golden(golden_dir):
    client_seen = set()
    agent_seeds = 0
    for f in sorted(pathlib.Path(golden_dir).glob("*.json")):
        scenario = json.loads(f.read_text())
        steps = [s for s in scenario["steps"] if "method" in s.get("do", {}) and
                 isinstance(s.get("expect"), dict) and "status" in s["expect"]]
        # The agent: the scenario's requests, on one connection but for its blocking reads.
        requests = b"".join(request_bytes(s["do"]) + (CONNECTION if blocks(s["do"]) else b"")
                            for s in steps[:8]).removesuffix(CONNECTION)
        if requests and len(requests) <= 16384 - 2:
            agent_seeds += 1
            pieces = bytes([READ_SIZES[agent_seeds % len(READ_SIZES)], 0])
            write("fuzz_agent_request", scenario["name"], pieces + requests)
        # The client: each kind of answer once per scenario.
        for n, s in enumerate(steps):
            kind = reply_kind(s["do"]["method"], s["do"]["path"])
            key = (scenario["name"], kind, s["expect"]["status"])
            if kind is None or key in client_seen or s["expect"].get("ignore_body"):
                continue
            client_seen.add(key)
            data = bytes([kind, READ_SIZES[len(client_seen) % len(READ_SIZES)]])
            data += answer_bytes(s["expect"], len(client_seen))
            if len(data) <= 16384:
                write("fuzz_client_response", f"{scenario['name']}-{n}", data)


def hand_written():
    s1, s2 = SESSIONS["s1"], SESSIONS["s2"]

    def answer(status, body, headers=(), ctype="application/json"):
        head = f"HTTP/1.1 {status} {http.client.responses[status]}\r\nContent-Type: {ctype}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers)
        head += f"Vary: Accept-Encoding\r\nDate: {DATE}\r\nContent-Length: {len(body)}\r\n\r\n"
        return head.encode() + body.encode()

    meta = [("X-Consul-Index", "42"), ("X-Consul-Knownleader", "true"),
            ("X-Consul-Lastcontact", "0")]
    record = json.dumps({"Limit": 2, "Holders": {s1: True, s2: True}}, separators=(",", ":"))
    entries = [
        {"LockIndex": 0, "Key": f"{PREFIX}sem/.lock", "Flags": 16210313421097356768,
         "Value": base64.b64encode(record.encode()).decode(), "CreateIndex": 40,
         "ModifyIndex": 42},
        {"LockIndex": 1, "Key": f"{PREFIX}sem/{s1}", "Flags": 16210313421097356768,
         "Value": None, "Session": s1, "CreateIndex": 41, "ModifyIndex": 41},
    ]
    agent_self = {"Config": {"Datacenter": "dc1", "NodeName": "conclave-dev",
                             "NodeID": UUID_OTHER, "Revision": "1e03567d", "Server": True,
                             "Version": "1.8.0"},
                  "Member": {"Name": "conclave-dev", "Addr": "127.0.0.1", "Port": 8301}}
    client = {
        "semaphore": bytes([SEMAPHORE, 0]) + answer(200, json.dumps(entries, indent=4), meta),
        "agent_self": bytes([AGENT_SELF, 0]) + answer(200, json.dumps(agent_self, indent=4)),
        "leader": bytes([LEADER, 7]) + answer(200, '"127.0.0.1:8300"'),
        "acl_denied": bytes([WRITE | 0x80, 0]) + answer(403, "Permission denied", (),
                                                        "text/plain; charset=utf-8"),
        "acl_not_found": bytes([KV_LIST, 0]) + answer(403, "ACL not found", (),
                                                      "text/plain; charset=utf-8"),
        "too_many_conns": bytes([KV_GET, 0]) + (
            b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\n"
            b"Content-Length: 81\r\nConnection: close\r\n\r\nYour IP is issuing too many "
            b"concurrent connections, please rate limit your calls\n"),
        "eof_delimited": bytes([KV_RAW, 3]) + (
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nraw"),
        "keep_alive_two": bytes([WRITE, 0]) + answer(200, "true") + answer(200, "false"),
        "no_leader": bytes([TXN, 0]) + answer(500, "No cluster leader", (),
                                              "text/plain; charset=utf-8"),
    }
    for name, data in client.items():
        write("fuzz_client_response", "hand-" + name, data)

    h = "Host: 127.0.0.1:8500\r\n"
    sep = CONNECTION.decode()
    big = "x" * 1100  # over the harness's max_header_bytes and kv_max_value_size (1 KiB)
    agent = {
        "chunked_put": f"PUT /v1/kv/{PREFIX}c HTTP/1.1\r\n{h}Transfer-Encoding: chunked\r\n\r\n"
                       "3\r\nabc\r\n0\r\n\r\n",
        "http10_keep_alive": f"GET /v1/kv/{PREFIX}c HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
                             f"GET /v1/status/leader HTTP/1.0\r\n\r\n",
        "absolute_target": f"GET http://127.0.0.1:8500/v1/kv/{PREFIX}c?recurse HTTP/1.1\r\n{h}\r\n",
        "options_head": f"OPTIONS /v1/kv/x HTTP/1.1\r\n{h}\r\nHEAD /v1/agent/self HTTP/1.1\r\n{h}\r\n",
        "redirects": f"GET /v1/kv HTTP/1.1\r\n{h}\r\nGET /v1/./session/../kv//a HTTP/1.1\r\n{h}\r\n"
                     f"GET / HTTP/1.1\r\n{h}\r\n",
        "chunked_trailer": f"PUT /v1/kv/{PREFIX}t HTTP/1.1\r\n{h}Transfer-Encoding: chunked\r\n\r\n"
                           "3;ext=1\r\nabc\r\n4 \r\ndefg\r\n0\r\nX-Trailer: 1\r\n \tfolded\r\n\r\n"
                           f"GET /v1/kv/{PREFIX}t?raw HTTP/1.1\r\n{h}\r\n",
        # What the server refuses, one connection each (a refusal closes it), then what a
        # ninth connection gets (max_conns_per_client 8: the harness keeps them all open).
        "refusals": f"PUT /v1/kv/{PREFIX}r HTTP/1.1\r\n{h}Transfer-Encoding: chunked\r\n\r\n"
                    f"1\r\na\r\n0\r\nno colon\r\n\r\n{sep}"
                    f"PUT /v1/kv/{PREFIX}r HTTP/1.1\r\n{h}Transfer-Encoding: chunked\r\n\r\n"
                    f"zz\r\n{sep}"
                    f"PUT /v1/kv/{PREFIX}r HTTP/1.1\r\n{h}Transfer-Encoding: gzip, chunked\r\n\r\n{sep}"
                    f"GET /v1/kv/{PREFIX}r HTTP/1.1\r\n\r\n{sep}"
                    f"GET /v1/kv/{PREFIX}r HTTP/1.1\r\n{h}Host: b\r\n\r\n{sep}"
                    f"GET {PREFIX}r HTTP/1.1\r\n{h}\r\n{sep}"
                    f"PUT /v1/kv/{PREFIX}r HTTP/1.1\r\n{h}Content-Length: 5\r\n\r\nab{sep}"
                    f"GET /v1/status/leader HTTP/1.1\r\n{h}\r\n{sep}"
                    f"GET /v1/status/leader HTTP/1.1\r\n{h}\r\n",
        "header_too_large": f"GET /v1/kv/{PREFIX}r HTTP/1.1\r\n{h}X-Big: {big}\r\n\r\n",
        "chunked_too_large": f"PUT /v1/kv/{PREFIX}r HTTP/1.1\r\n{h}Transfer-Encoding: chunked\r\n\r\n"
                             f"{len(big):x}\r\n{big}\r\n0\r\n\r\n",
        "expect_continue": f"PUT /v1/kv/{PREFIX}e HTTP/1.1\r\n{h}Expect: 100-continue\r\n"
                           "Content-Length: 5\r\n\r\nhello",
        "too_large_early": f"PUT /v1/kv/{PREFIX}big HTTP/1.1\r\n{h}Content-Length: 600000\r\n\r\n",
        "controls": f"PUT /v1/_conclave/inject/errors?prefix=/v1/kv/&count=2&status=503 HTTP/1.1\r\n"
                    f"{h}Content-Length: 0\r\n\r\nGET /v1/kv/a HTTP/1.1\r\n{h}\r\n"
                    f"PUT /v1/_conclave/session/expire/{{s1}} HTTP/1.1\r\n{h}Content-Length: 0\r\n\r\n"
                    f"PUT /v1/_conclave/tombstones/reap HTTP/1.1\r\n{h}Content-Length: 0\r\n\r\n"
                    f"GET /v1/_conclave/stats HTTP/1.1\r\n{h}\r\n"
                    f"PUT /v1/_conclave/reset HTTP/1.1\r\n{h}Content-Length: 0\r\n\r\n",
        "catalog": f"PUT /v1/catalog/register HTTP/1.1\r\n{h}Content-Length: 89\r\n\r\n"
                   '{"Node":"fz-n","Address":"127.0.0.2","Checks":[{"CheckID":"c","Status":"passing"}]}\n'
                   f"GET /v1/catalog/nodes HTTP/1.1\r\n{h}\r\nGET /v1/health/node/fz-n HTTP/1.1\r\n{h}\r\n"
                   f"GET /v1/catalog/node/fz-n HTTP/1.1\r\n{h}\r\n",
        "blocking_woken": f"PUT /v1/session/create HTTP/1.1\r\n{h}Content-Length: 0\r\n\r\n"
                          f"PUT /v1/kv/{PREFIX}w HTTP/1.1\r\n{h}Content-Length: 1\r\n\r\nv"
                          f"GET /v1/kv/{PREFIX}w?index={{ix}}&wait=1s HTTP/1.1\r\n{h}\r\n{sep}"
                          f"GET /v1/session/info/{{s1}}?index={{ix}} HTTP/1.1\r\n{h}\r\n{sep}"
                          f"GET /v1/kv/{PREFIX}?recurse&index={{ix}} HTTP/1.1\r\n{h}\r\n{sep}"
                          f"PUT /v1/kv/{PREFIX}w?acquire={{s1}} HTTP/1.1\r\n{h}"
                          "Content-Length: 1\r\n\r\nw"
                          f"PUT /v1/session/destroy/{{s1}} HTTP/1.1\r\n{h}Content-Length: 0\r\n\r\n",
        "blocking_session": f"PUT /v1/session/create HTTP/1.1\r\n{h}Content-Length: 33\r\n\r\n"
                            '{"TTL":"15s","Behavior":"delete"}'
                            f"GET /v1/session/info/{{s1}}?index={{ix}}&wait=1s HTTP/1.1\r\n{h}\r\n{sep}"
                            f"GET /v1/session/list?index={{ix}} HTTP/1.1\r\n{h}\r\n{sep}"
                            f"PUT /v1/session/renew/{{s1}} HTTP/1.1\r\n{h}Content-Length: 0\r\n\r\n",
    }
    for name, text in agent.items():
        data = text.encode()
        if name == "catalog":  # Content-Length of the JSON body, counted here
            body = data.split(b"\r\n\r\n", 1)[1].split(b"GET ", 1)[0]
            data = data.replace(b"Content-Length: 89", b"Content-Length: %d" % len(body))
        # Byte by byte or 7 bytes at a time from the body's start (the chunk lines), or 4 KiB.
        size = {"chunked_put": 1, "chunked_trailer": 7}.get(name, 0)
        start = -(-(data.find(b"\r\n\r\n") + 4) // 16) if size else 0  # (rounded up)
        write("fuzz_agent_request", "hand-" + name, bytes([size, start]) + data)

    durations = ["10s", "1h2m3.5s", "-1.5h", "300ms", "1us", "1\u00b5s", "1\u03bcs", "0", "",
                 "+5m", "-0", "2562047h47m16.854775807s", "-2562047h47m16.854775808s",
                 "9223372036854775807ns", "1.000000000000000000001s", ".5s", "5.s", "1h1h",
                 "15s", "0.1ns", "1d", "1e3s", "24h0m0s"]
    for i, d in enumerate(durations):
        write("fuzz_cli_parse", f"duration-{i:02d}", bytes([6]) + d.encode())
    commands = [
        (0, ["-n=2", "-timeout=10s", "-monitor-retry", "5", "service/web/lock", "echo", "hi"]),
        (0, ["--try", "1m30s", "-shell=false", "-pass-stdin", "-child-exit-code", "-verbose",
             "/service//web/../api/./lock/", "sleep", "5"]),
        (0, ["-n", "0x10", "-name", "my lock", "-http-addr=https://[::1]:8501", "-token=abc",
             "-ca-file=/etc/ca.pem", "x", "true"]),
        (1, ["-name=node-a", "-once", "-lock-delay=0s", "-leader", "--", "service/leader",
             "run.sh"]),
        (1, ["-lock-delay", "-1ms", "-shell=F", "-datacenter", "dc2", "elect/key", "cmd"]),
        (2, ["-recurse", "-detailed", "-separator=/", "-http-addr", "unix:///tmp/consul.sock",
             "app/config/"]),
        (2, ["-keys", "-http-addr=127.0.0.1:8500", "-token-file=/dev/null", "app"]),
        (3, ["-flags=0o17", "-cas", "-modify-index=0b1010", "-client-cert=c.pem",
             "-client-key=k.pem", "app/a", "value"]),
        (3, ["-flags", "18446744073709551615", "-modify-index=1_000", "app/b", "-"]),
        (4, ["-recurse", "-cas", "-modify-index=0x_ff", "-tls-server-name=consul", "app/"]),
        (5, ["-prefix", "-count=3", "-http-addr=http://localhost", "app/config/"]),
        (5, ["-count", "-1", "-help"]),
        (0, ["-=x", "---n", "-n"]),
    ]
    for i, (which, argv) in enumerate(commands):
        write("fuzz_cli_parse", f"command-{i:02d}", bytes([which]) + "\n".join(argv).encode())
    envs = [
        "CONSUL_HTTP_ADDR=https://consul.service:8501\nCONSUL_HTTP_SSL_VERIFY=false\n"
        "CONSUL_CACERT=/etc/consul/ca.pem\nCONSUL_TLS_SERVER_NAME=server.dc1.consul",
        "CONSUL_HTTP_ADDR=127.0.0.1:8500\nCONSUL_HTTP_TOKEN=3b6f\nCONSUL_HTTP_SSL=true",
        "CONSUL_HTTP_ADDR=unix:///var/run/consul.sock\nCONSUL_CLIENT_CERT=c.pem",
        "CONSUL_HTTP_ADDR=[fe80::1]:99999\nCONSUL_HTTP_SSL=maybe",
    ]
    for i, e in enumerate(envs):
        write("fuzz_cli_parse", f"env-{i:02d}", bytes([7]) + e.encode())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    from_golden(sys.argv[1])
    hand_written()


if __name__ == "__main__":
    main()
