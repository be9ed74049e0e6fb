# SPDX-License-Identifier: BSL-1.0
"""The servers chaos.py runs: `conclave agent -dev` or a Consul cluster on loopback.

Both are started as children that die with the driver (PR_SET_PDEATHSIG) and are killed
with SIGKILL on kill() and stop(). The methods block (they poll HTTP): the driver calls
them in a thread. `http_address(i)` is where server i answers right now.

- DevAgent: one in-memory agent; restart() kills it and starts a new one, with an empty
  state, on a new port (the fault proxy in front hides the change).
- ConsulCluster: N Consul servers (`consul agent -server`) with data directories;
  kill(i) and start(i) keep server i's ports and data, so it rejoins with its Raft state.
  The arguments mirror support/consul_launcher/consul_server.cpp.
"""
import ctypes
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import time

_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent():
    """preexec_fn: SIGKILL when the driver dies, however it dies."""
    _libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def http_get(address, path, timeout=2.0):
    """(status, decoded JSON or None), or None when the server does not answer."""
    return http_call("GET", address, path, timeout)


def http_call(method, address, path, timeout=2.0):
    host, port = address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request(method, path)
        reply = conn.getresponse()
        body = reply.read()
        try:
            return reply.status, json.loads(body) if body else None
        except ValueError:
            return reply.status, None
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def _port_free(port, udp):
    kinds = [socket.SOCK_STREAM] + ([socket.SOCK_DGRAM] if udp else [])
    for kind in kinds:
        with socket.socket(socket.AF_INET, kind) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True


def pick_port(udp=False):
    """A free port below the ephemeral range, so that no outgoing connection takes it."""
    while True:
        port = random.SystemRandom().randint(10000, 32000)
        if _port_free(port, udp):
            return port


def _kill(proc):
    if proc and proc.poll() is None:
        proc.kill()
        proc.wait()


class DevAgent:
    count = 1
    loses_state = True

    def __init__(self, conclave, work):
        self.conclave = conclave
        self.log = open(os.path.join(work, "agent.log"), "ab")
        self.proc = None
        self.address = None

    def http_address(self, i=0):
        return self.address

    def start(self):
        self.proc = subprocess.Popen(
            [self.conclave, "agent", "-dev", "-http-addr", "127.0.0.1:0",
             "-session-ttl-min", "1s"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.log,
            preexec_fn=die_with_parent)
        line = self.proc.stdout.readline().decode()
        if "listening on" not in line:
            raise RuntimeError(f"conclave agent did not start: {line!r}")
        self.address = line.split("listening on ", 1)[1].split()[0]

    def kill(self):
        _kill(self.proc)

    def restart(self):
        """Kills the agent and starts an empty one, on another port than before."""
        old = self.address
        self.kill()
        self.start()
        while self.address == old:
            self.kill()
            self.start()

    def stop(self):
        self.kill()


class ConsulCluster:
    loses_state = False

    def __init__(self, consul, work, count):
        self.consul, self.work, self.count = consul, work, count
        self.procs = [None] * count
        self.ports = self.pick_ports()

    def pick_ports(self):
        return [{"http": pick_port(), "serf_lan": pick_port(True),
                 "serf_wan": pick_port(True), "server": pick_port()}
                for _ in range(self.count)]

    def http_address(self, i):
        return f"127.0.0.1:{self.ports[i]['http']}"

    def node(self, i):
        return f"chaos-{i}"

    def arguments(self, i):
        p = self.ports[i]
        args = [self.consul, "agent", "-server", "-bootstrap-expect", str(self.count),
                "-data-dir", os.path.join(self.work, f"data-{i}"),
                "-hcl", "performance { raft_multiplier = 1 }"]
        for other in self.ports:
            args += ["-retry-join", f"127.0.0.1:{other['serf_lan']}"]
        args += ["-node", self.node(i), "-bind", "127.0.0.1", "-advertise", "127.0.0.1",
                 "-client", "127.0.0.1", "-http-port", str(p["http"]),
                 "-serf-lan-port", str(p["serf_lan"]), "-serf-wan-port", str(p["serf_wan"]),
                 "-server-port", str(p["server"]), "-dns-port", "-1", "-grpc-port", "-1",
                 "-hcl", 'session_ttl_min = "1s"']
        return args

    def spawn(self, i):
        """Starts server i (returns at once; wait_ready() waits for it). The process that
        calls it must outlive the server: PR_SET_PDEATHSIG fires when the spawning thread
        exits."""
        with open(os.path.join(self.work, f"server-{i}.log"), "ab") as log:
            self.procs[i] = subprocess.Popen(self.arguments(i), stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=log,
                                             preexec_fn=die_with_parent)

    def start(self, attempts=3):
        """Starts every server and waits for the cluster. A port picked free can be taken by
        another program before its server binds it (tests start clusters side by side):
        that server exits, and the cluster starts again, empty, on other ports."""
        for attempt in range(attempts):
            for i in range(self.count):
                self.spawn(i)
            try:
                self.wait_ready(range(self.count))
                return
            except RuntimeError:
                exited = any(p.poll() is not None for p in self.procs)
                if not exited or attempt + 1 == attempts:
                    raise
            self.stop()
            for i in range(self.count):
                shutil.rmtree(os.path.join(self.work, f"data-{i}"), ignore_errors=True)
            self.ports = self.pick_ports()

    def ready(self, i):
        """Knows a leader, and its node's serfHealth (which sessions are bound to) passes."""
        leader = http_get(self.http_address(i), "/v1/status/leader")
        if not leader or leader[0] != 200 or not leader[1]:
            return False
        checks = http_get(self.http_address(i), f"/v1/health/node/{self.node(i)}")
        return bool(checks and checks[0] == 200 and any(
            c.get("CheckID") == "serfHealth" and c.get("Status") == "passing"
            for c in checks[1] or []))

    def wait_ready(self, which, limit=90):
        end = time.monotonic() + limit
        for i in which:
            while not self.ready(i):
                for j in which:  # (one that exited keeps the others from a quorum)
                    if self.procs[j].poll() is not None:
                        raise RuntimeError(f"consul server {j} exited; see server-{j}.log")
                if time.monotonic() > end:
                    raise RuntimeError(f"consul server {i} not ready in {limit} s")
                time.sleep(0.1)

    def kill(self, i):
        _kill(self.procs[i])

    def leader(self):
        """Index of the leader, or None."""
        for i in range(self.count):
            if self.procs[i] is None or self.procs[i].poll() is not None:
                continue
            r = http_get(self.http_address(i), "/v1/status/leader")
            if r and r[0] == 200 and r[1]:
                for j, p in enumerate(self.ports):
                    if r[1] == f"127.0.0.1:{p['server']}":
                        return j
        return None

    def stop(self):
        for p in self.procs:
            _kill(p)

