#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""docker-compose.yml's scenario without containers (compose/README.md).

Three Consul servers on loopback (test/chaos/servers.py), and the same services as the
compose file, as processes, each talking to one server: two leader_service instances
(servers 0 and 1), the seed and four job workers (server 2), two `conclave lock` instances
running a command (servers 0 and 1). Once a leader leads, a lock holder runs and every task
is done (each exactly once), the Raft leader is stopped with SIGTERM (what `docker compose
stop` sends), then the server of the leading instance. After each stop, within a bound,
there must again be a leader and a lock holder running its command; the stopped server is
started again and rejoins. Failed services are started again, as Compose does. Last, the
services are stopped with SIGINT (Ctrl+C), and each must exit cleanly. (Overlapping holds
and leaked sessions under faults are the chaos suite's subject: test/chaos.)

usage: scenario.py --consul CONSUL --conclave CONCLAVE --examples DIR [--work DIR]
Exit status 0 when every check held; the last line says what was seen.
"""
import argparse
import base64
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test",
                                "chaos"))
from servers import ConsulCluster, die_with_parent, http_get  # noqa: E402

TASKS = 20
BOUND = 60.0  # seconds for anything to happen (elections and restarts included)


class Service:
    """A service process; its output lines are kept with the time they came. With
    `restart`, it is started again when it fails (Compose's `restart: on-failure`), at
    most once a second."""

    running = []  # the services to supervise

    def __init__(self, name, argv, address, work, restart=False):
        self.name, self.argv, self.lines, self.restart = name, argv, [], restart
        self.env = dict(os.environ, CONSUL_HTTP_ADDR=address)
        self.env.pop("CONSUL_HTTP_TOKEN", None)
        self.log = open(os.path.join(work, name + ".log"), "w")
        self.stopping = False
        self._start()
        Service.running.append(self)

    def _start(self):
        self.started = time.monotonic()
        self.proc = subprocess.Popen(self.argv, env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, preexec_fn=die_with_parent)
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()

    def _read(self, proc):
        for line in proc.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))
            self.log.write("%.3f %s" % (time.monotonic(), line))
            self.log.flush()

    def supervise(self):
        if (self.restart and not self.stopping and self.proc.poll() not in (None, 0)
                and time.monotonic() - self.started >= 1.0):
            self.log.write("%.3f [scenario: exited with %d, started again]\n"
                           % (time.monotonic(), self.proc.returncode))
            self._start()

    def saw(self, text, since=0.0):
        return any(t >= since and text in line for t, line in list(self.lines))

    def interrupt(self, limit=30.0):
        self.stopping = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(limit)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def wait_for(what, condition, limit=BOUND):
    end = time.monotonic() + limit
    while not condition():
        for s in Service.running:
            s.supervise()
        if time.monotonic() > end:
            raise AssertionError("not seen within %.0f s: %s" % (limit, what))
        time.sleep(0.2)


def entry(cluster, alive, key):
    """`key` as a live server has it ({} when absent or unknown)."""
    for i in alive:
        r = http_get(cluster.http_address(i), "/v1/kv/" + key)
        if r and r[0] == 200 and r[1]:
            return r[1][0]
        if r and r[0] == 404:
            return {}
    return {}


def holder(cluster, alive, key):
    """The session holding `key` ('' when free or unknown)."""
    return entry(cluster, alive, key).get("Session", "")


def leader(cluster, alive):
    """The leading instance's address ('' when none)."""
    e = entry(cluster, alive, "service/example/leader")
    if not e.get("Session"):
        return ""
    return base64.b64decode(e.get("Value") or "").decode()


def voters(cluster):
    """Voters in the Raft configuration, as a live server knows it (0 when unknown)."""
    for i in range(cluster.count):
        if cluster.procs[i] is None or cluster.procs[i].poll() is not None:
            continue
        r = http_get(cluster.http_address(i), "/v1/operator/raft/configuration")
        if r and r[0] == 200 and r[1]:
            return sum(1 for s in r[1].get("Servers", []) if s.get("Voter"))
    return 0


def keys(cluster, alive, prefix):
    for i in alive:
        r = http_get(cluster.http_address(i), "/v1/kv/%s?keys" % prefix)
        if r and r[0] in (200, 404):
            return r[1] or []
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--consul", required=True)
    ap.add_argument("--conclave", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--work")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="conclave-compose-")
    os.makedirs(work, exist_ok=True)
    cluster = ConsulCluster(a.consul, work, 3)
    services = []
    try:
        cluster.start()
        every = range(3)
        addr = cluster.http_address
        example = lambda name: os.path.join(a.examples, "example_" + name)  # noqa: E731
        # `conclave lock` runs its arguments joined by $SHELL -c, as `consul lock` does.
        report = lambda name: ["while true; do echo report running on %s; sleep 1; done"  # noqa: E731
                               % name]
        leaders = [Service(name, [example("leader_service"), name + ":8080"], addr(server), work,
                           restart=True) for name, server in (("leader-a", 0), ("leader-b", 1))]
        locks = [Service(name, [a.conclave, "lock", "service/compose/report"] + report(name),
                         addr(server), work, restart=True)
                 for name, server in (("lock-1", 0), ("lock-2", 1))]
        services += leaders + locks
        for i in range(1, TASKS + 1):
            subprocess.run([a.conclave, "kv", "put", "jobs/tasks/task-%d" % i, "payload-%d" % i],
                           env=dict(os.environ, CONSUL_HTTP_ADDR=addr(2)), check=True,
                           stdout=subprocess.DEVNULL)
        workers = Service("workers", [example("job_workers"), "4"], addr(2), work)
        services.append(workers)

        wait_for("a leader", lambda: any(s.saw(": leading") for s in leaders))
        wait_for("a lock holder running the command",
                 lambda: any(s.saw("report running") for s in locks))
        wait_for("the workers done", lambda: workers.proc.poll() is not None)
        assert workers.proc.returncode == 0, "the workers exited with %d" % workers.proc.returncode
        done = keys(cluster, every, "jobs/done/")
        assert len(done) == TASKS, "tasks done: %d of %d" % (len(done), TASKS)
        ran = sum(1 for _, line in workers.lines if " ran task-" in line)
        assert ran == TASKS, "tasks run: %d (each exactly once: %d)" % (ran, TASKS)

        def stop_and_check(stopped, why):
            cluster.procs[stopped].send_signal(signal.SIGTERM)
            cluster.procs[stopped].wait(30)
            at = time.monotonic()
            alive = [i for i in every if i != stopped]
            print("%.3f stopped server %d (%s)" % (at, stopped, why), flush=True)
            # Again a leader, and a lock holder running its command, on a live server.
            servers = {"leader-a:8080": 0, "leader-b:8080": 1}
            wait_for("a leader after stopping server %d" % stopped,
                     lambda: servers.get(leader(cluster, alive), stopped) != stopped)
            wait_for("the lock's command running after stopping server %d" % stopped,
                     lambda: any(s.saw("report running", since=at + 1.0)
                                 for s, server in zip(locks, (0, 1)) if server != stopped))
            cluster.spawn(stopped)
            cluster.wait_ready([stopped])
            # Back as a voter (autopilot promotes a rejoining server once it is stable): until
            # then, stopping another server would leave no quorum.
            wait_for("server %d a voter again" % stopped, lambda: voters(cluster) == 3)
            print("%.3f server %d is back; Raft leader: server %s"
                  % (time.monotonic(), stopped, cluster.leader()), flush=True)
            return at

        # The Raft leader: an election; the services of the other servers carry on.
        first = cluster.leader()
        assert first is not None, "no Raft leader"
        stop_and_check(first, "the Raft leader")
        # The server of the leading instance: it loses its agent and steps down, and the
        # other instance leads once Consul has ended the first one's session and its
        # lock-delay has passed.
        leading = ""

        def someone_leads():
            nonlocal leading
            leading = leader(cluster, every)
            return leading in ("leader-a:8080", "leader-b:8080")
        wait_for("a leader", someone_leads)
        server_of_leader = 0 if leading == "leader-a:8080" else 1
        at = stop_and_check(server_of_leader, "the leading instance's server")
        deposed = leaders[server_of_leader]
        wait_for("the deposed instance saying so",
                 lambda: deposed.saw("no longer leading", since=at) or
                 deposed.proc.poll() is not None)
        stopped = server_of_leader
        # Every service running again (Compose's restarts), its process up for 5 s, before
        # Ctrl+C: each must then clean up and exit 0.
        wait_for("every service running again",
                 lambda: all(s.proc.poll() is None and time.monotonic() - s.started >= 5.0
                             for s in leaders + locks))
        for s in services:
            status = s.interrupt()
            # `conclave lock` exits 128 + the signal's number, as `consul lock` does.
            expected = (0, 128 + signal.SIGINT) if s in locks else (0,)
            assert status in expected, "%s exited with %d on Ctrl+C (see %s.log)" % (
                s.name, status, s.name)
        print("compose scenario: stopped the Raft leader (server %d) and the leading "
              "instance's server (%d): a leader and a lock holder each time, %d tasks done "
              "once each, every service stopped cleanly" % (first, stopped, TASKS))
        return 0
    except Exception as e:  # noqa: BLE001 (any failure is the scenario's verdict)
        print("compose scenario: FAILED: %s: %s (logs in %s)" % (type(e).__name__, e, work))
        if not a.work:
            a.work = work  # keep the logs of a failed run
        return 1
    finally:
        for s in services:
            if s.proc.poll() is None:
                s.proc.kill()
        cluster.stop()
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
