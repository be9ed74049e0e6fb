#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Chaos test of `conclave lock`: contenders in many processes take turns at a few locks
through a fault proxy, while holders are paused and servers restarted; every hold writes to
a store that refuses stale fencing tokens, and check.py judges the history. One of the locks
is a read-write lock (`conclave lock -shared` and `-exclusive`).

    chaos.py --conclave PATH (--short | --long) [--seed N] [--consul-bin PATH [--servers 3]]
             [--work DIR] [--keep]

Servers: by default a `conclave agent -dev` (restarts lose its state); with --consul-bin, a
cluster of --servers Consul servers on loopback (a killed server comes back with its data).
Everything runs on this machine and is killed when the driver exits, however it exits.

The pieces, each in its own module:

- faultproxy.py: one proxy per server; the contenders reach Consul only through it. The
  driver cycles its modes: clean, latency, drops, resets, lost responses, black holes.
- fence.py: the fenced store (a unix socket served by this process): accepts a write iff
  its token is at least the highest it accepted for that key.
- hold.py: the command of every `conclave lock` run: writes to the store a few times with
  CONCLAVE_LOCK_TOKEN, once more when signalled, and records its hold. A -shared holder
  reads instead: the store judges its token against the writes (fence.py).
- check.py: judges the history in the work directory; prints the last line
  `handoffs=N faults=M violations=V leaked=L`; this driver exits with its verdict.

The plan: `--short` is one 120 s cycle with 6 contenders over 2 locks; `--long` repeats
150 s cycles with 8 contenders over 4 locks until 10,000 handoffs. Contenders run
`conclave lock -verbose -monitor-retry 3` again and again; 15% of runs have a -timeout of
20-100 ms, 3% get SIGINT after 5-300 ms (mostly while they wait). Lock 1 is a read-write
lock (the prefix itself is its key, its keys under `<prefix>/.rwlock`): each run there is
`-shared` (60%) or `-exclusive`, so readers hold together, a writer alone, through the same
faults and pauses; check.py allows overlapping -shared holds only. The fault proxy is clean
for 2-5 s, then in a fault mode for 2-6 s (black holes 1-4 s; in --long, sometimes 22 s,
longer than the TTL), and so on. A long pause stops a holder with SIGSTOP (its hold.py
and its conclave lock) for 60 s, more than twice the session TTL: Consul expires the
session (2 x 15 s after its last renewal), its lock-delay (15 s) passes, another contender
takes the lock, and the paused one, resumed, overlaps it until conclave lock sees the loss
and stops it; its writes in that time must be refused. --short pauses a holder of each of
its locks in turn, --long one lock per cycle. Brief pauses (1-8 s) come on top, and server
restarts: the dev agent restarts empty; on a cluster one server is killed for 8-10 s (a
follower, then the leader, in --short; in turn in --long). And once a cycle a holder's
command hangs (SIGSTOP to it alone) while its session is destroyed behind its back: conclave
lock must kill it (SIGTERM, SIGKILL 5 s later) before the lock-delay lets anyone in. Not on
the read-write lock, which has no lock-delay (every acquire writes a key of its own), so
the next holder may come in before the stuck command is gone: there only the fence protects,
and the long pauses test it.

At the end the proxy turns clean and the contenders go on until no session of an exited
run is left (Consul expires those whose cleanup was cut off: up to 2 x TTL), then stop; the
server must then hold no session and no key of the run. Throughout, a session still there
more than 1 s after its run exited saying it had cleaned up is a leak.

conclave lock's session TTL (15 s) and lock-delay (15 s) are fixed: they are `consul
lock`'s, and the CLI has no flag for them. Hence the long pauses.
"""
import argparse
import asyncio
import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check  # noqa: E402
from faultproxy import FaultProxy  # noqa: E402
from fence import FenceStore  # noqa: E402
from servers import ConsulCluster, DevAgent, die_with_parent, http_call, http_get  # noqa: E402

TTL = 15          # s, conclave lock's session TTL (cli/lock/run.cpp); Consul waits up to 2x
LOCK_DELAY = 15   # s, its sessions' lock-delay

# Actions at offsets (s) into a cycle. "pause L" pauses a holder of lock L for 60 s;
# "brief" pauses a holder of any lock for 1-8 s; "hang" stops a holder's command alone and
# destroys its session (see hang()); "restart [leader|follower]" restarts the dev
# agent, or kills a cluster server for 8-10 s (the leader and a follower in turn when not
# said); "kill leader|follower" is the same, but on a cluster only. No restart or kill
# while a long pause waits for its session to expire and its lock to be taken (60 s): a
# restarted dev agent forgets the session (the pause would prove nothing), and a cluster
# server coming back may start an election, whose new leader restarts every session's TTL.
SHORT_PLAN = [(2, "pause 0"), (12, "pause 1"), (45, "kill follower"), (50, "brief"),
              (65, "brief"), (76, "hang"), (85, "brief"), (95, "restart leader")]
SHORT_SECONDS = 120
LONG_PLAN = [(2, "pause"), (10, "brief"), (40, "brief"), (70, "brief"), (80, "restart"),
             (100, "hang"), (115, "brief"), (135, "brief")]
LONG_CYCLE = 150
LONG_PAUSE = 60

# Lanes whose lock is a read-write lock (lane 1 of --short's 2 and --long's 4), and the
# share of its runs that are -shared.
RW_LANES = {1}
SHARED = 0.6

PROFILES = {
    "short": {"lanes": 2, "contenders": 6, "min_handoffs": 100, "target": None,
              "max_seconds": SHORT_SECONDS},
    "long": {"lanes": 4, "contenders": 8, "min_handoffs": 10000, "target": 10000,
             "max_seconds": 3600},
}


def now():
    return time.monotonic_ns()


class Driver:
    def __init__(self, args):
        self.args = args
        self.profile = PROFILES["long" if args.long else "short"]
        self.rng = random.Random(args.seed)
        self.work = args.work or tempfile.mkdtemp(prefix="conclave-chaos-")
        os.makedirs(self.work, exist_ok=True)
        self.tag = f"chaos-{os.getpid()}-{random.randrange(10 ** 6)}"
        self.t0 = time.monotonic()
        self.live = {}          # run -> (process, lane) of conclave lock runs in progress
        self.exited = {}        # run -> (status, exit time) for the session audit
        self.paused = set()     # runs whose hold is stopped now
        self.leaks, self.leaked_ids, self.problems = [], set(), []
        self.period_faults = self.pauses = self.hangs = self.restarts = self.audits = 0
        self.periods = collections.Counter()  # fault periods by mode
        self.stopping = False
        self.epoch = 0
        self.runs_log = open(self.path("runs.jsonl"), "a", buffering=1)
        self.events_log = open(self.path("events.jsonl"), "a", buffering=1)

    def path(self, name):
        return os.path.join(self.work, name)

    def say(self, text):
        print(f"[{time.monotonic() - self.t0:7.1f}s] {text}", flush=True)

    def event(self, record):
        self.events_log.write(json.dumps(record) + "\n")

    def prefix(self, lane):
        return f"{self.tag}/lock{lane}"

    # --- servers ---------------------------------------------------------------------

    def start_servers(self):
        if self.args.consul_bin:
            self.server = ConsulCluster(self.args.consul_bin, self.work, self.args.servers)
            self.server.start()
        else:
            self.server = DevAgent(self.conclave, self.work)
            self.server.start()
            self.write_epoch()

    def write_epoch(self):
        tmp = self.path("epoch.tmp")
        with open(tmp, "w") as f:
            f.write(f"{self.epoch} {self.server.http_address(0)}\n")
        os.replace(tmp, self.path("epoch"))

    async def restart(self, which):
        t0 = now()
        if isinstance(self.server, DevAgent):
            self.server.kill()
            self.epoch += 1
            self.server.start()
            self.write_epoch()
            for p in self.proxies:
                p.upstream = tuple_address(self.server.http_address(0))
            self.say(f"dev agent restarted, empty, at {self.server.http_address(0)}")
            self.event({"kind": "restart", "t0": t0, "t1": now(), "loses_state": True,
                        "epoch": self.epoch})
        else:
            leader = await asyncio.to_thread(self.server.leader)
            if which == "leader" and leader is not None:
                i = leader
            else:
                i = self.rng.choice([j for j in range(self.server.count) if j != leader])
            self.server.kill(i)
            self.say(f"consul server {i} killed ({'leader' if i == leader else 'follower'})")
            await asyncio.sleep(self.rng.uniform(8, 10))
            for attempt in range(20):
                self.server.spawn(i)
                try:
                    await asyncio.to_thread(self.server.wait_ready, [i])
                    break
                except RuntimeError:
                    if attempt == 19:
                        raise
                    await asyncio.sleep(0.5)
            self.say(f"consul server {i} back")
            self.event({"kind": "restart", "server": i, "was_leader": i == leader, "t0": t0,
                        "t1": now(), "loses_state": False})
        self.restarts += 1

    def sessions_and_keys(self):
        """(sessions, keys) of this run on the server, read directly (not through the
        proxy), or None when no server answers."""
        for i in range(getattr(self.server, "count", 1)):
            address = self.server.http_address(i)
            sessions = http_get(address, "/v1/session/list?consistent")
            keys = http_get(address, f"/v1/kv/{self.tag}/?recurse&consistent")
            if sessions and sessions[0] == 200 and keys and keys[0] in (200, 404):
                mine = [s for s in sessions[1] or [] if s["Name"].startswith(self.tag + "/")]
                return mine, keys[1] or []
        return None

    # --- contenders --------------------------------------------------------------------

    async def contend(self, number):
        lanes = self.profile["lanes"]
        lane = number % lanes
        proxy = self.proxies[number % len(self.proxies)]
        env = dict(os.environ, CONSUL_HTTP_ADDR=proxy.address, CHAOS_STORE=self.store.path,
                   CHAOS_HOLDS=self.path("holds.jsonl"))
        if isinstance(self.server, DevAgent):
            env["CHAOS_EPOCH"] = self.path("epoch")
        n = 0
        while not self.stopping:
            run = f"l{lane}.c{number}.{n}"
            n += 1
            cmd = [self.conclave, "lock", "-verbose", "-shell=false", "-monitor-retry", "3",
                   "-name", f"{self.tag}/{run}"]
            mode, key, op = "plain", self.prefix(lane) + "/.lock", "WRITE"
            if lane in RW_LANES:
                mode = "shared" if self.rng.random() < SHARED else "exclusive"
                key, op = self.prefix(lane), "READ" if mode == "shared" else "WRITE"
                cmd.append("-" + mode)
            timeout = None
            if self.rng.random() < 0.15 and not self.stopping:
                timeout = self.rng.randint(20, 100)
                cmd += ["-timeout", f"{timeout}ms"]
            cmd += [self.prefix(lane), sys.executable, "-S", os.path.join(HERE, "hold.py")]
            start = now()
            proc = await asyncio.create_subprocess_exec(
                *cmd, env=dict(env, CHAOS_RUN=run, CHAOS_OP=op),
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True, preexec_fn=die_with_parent)
            self.live[run] = (proc, lane)
            timer = None
            if self.rng.random() < 0.03 and not self.stopping:
                timer = asyncio.get_running_loop().call_later(
                    self.rng.uniform(0.005, 0.3), self.interrupt, run)
            err = (await proc.stderr.read()).decode(errors="replace")
            status = await proc.wait()
            end = now()
            if timer:
                timer.cancel()
            del self.live[run]
            self.exited[run] = (status, end)
            self.runs_log.write(json.dumps({
                "run": run, "key": key, "mode": mode, "status": status,
                "timeout_ms": timeout, "start": start, "end": end, "stderr": err[-4000:]}) + "\n")
            if status != 0 and "Lock acquired (" not in err:
                await asyncio.sleep(self.rng.uniform(0.1, 0.5))  # no server: do not spin

    def interrupt(self, run):
        """SIGINT to a run that is still waiting for the lock (cancellation). With os.kill:
        asyncio's send_signal() polls the process first, and reaping it there takes its
        exit status from asyncio's child watcher (which then reports 255)."""
        if run in self.live and run not in self.store.active:
            proc = self.live[run][0]
            if proc.returncode is None:
                send(proc.pid, signal.SIGINT)

    # --- chaos -------------------------------------------------------------------------

    async def cycle_faults(self):
        """Cycles the proxies' modes: clean 2-5 s, then a fault for 2-6 s."""
        modes = ["latency", "drops", "resets", "lost", "blackhole"]
        try:
            while True:
                await asyncio.sleep(self.rng.uniform(2, 5))
                mode = self.rng.choice(modes)
                seconds = self.rng.uniform(1, 4) if mode == "blackhole" else self.rng.uniform(2, 6)
                if mode == "blackhole" and self.args.long and self.rng.random() < 0.15:
                    seconds = TTL + 7  # longer than the TTL: every holder loses its lock
                    self.say(f"black hole for {seconds} s")
                t0 = now()
                for p in self.proxies:
                    p.set_mode(mode)
                self.period_faults += 1
                self.periods[mode] += 1
                try:
                    await asyncio.sleep(seconds)
                finally:
                    for p in self.proxies:
                        p.set_mode("clean")
                    self.event({"kind": "fault", "mode": mode, "t0": t0, "t1": now()})
        except asyncio.CancelledError:
            pass

    async def pause(self, lane, seconds):
        """Stops a holder of `lane` (any lock when None), its hold.py's group and its
        conclave lock, for `seconds`, then resumes it (hold first)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for run, pgid in list(self.store.active.items()):
                if run in self.paused or run not in self.live or \
                        lane not in (None, self.live[run][1]):
                    continue
                proc, its_lane = self.live[run]
                if not send(pgid, signal.SIGSTOP, group=True):
                    continue  # it just ended
                t0 = now()
                send(proc.pid, signal.SIGSTOP)
                self.paused.add(run)
                self.pauses += 1
                if seconds > 2 * TTL:
                    self.say(f"paused {run} for {seconds:.0f} s")
                try:
                    await asyncio.sleep(seconds)
                finally:
                    send(pgid, signal.SIGCONT, group=True)
                    send(proc.pid, signal.SIGCONT)
                    self.paused.discard(run)
                    self.event({"kind": "pause", "run": run, "lane": its_lane, "t0": t0,
                                "t1": now()})
                return
            await asyncio.sleep(0.005)
        self.say(f"no holder of {'any lock' if lane is None else f'lock {lane}'} to pause "
                 "within 30 s")

    async def hang(self):
        """Stops a hold's command alone (its conclave lock runs on, renewing) and destroys
        its session behind its back, as an operator or a failed health check would: conclave
        lock must see the loss and stop the stuck command, SIGTERM then SIGKILL 5 s later,
        before the session's lock-delay (15 s) lets anyone else take the lock. The event
        records when the command was gone; check.py counts the hold until then."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for run, pgid in list(self.store.active.items()):
                token = self.store.tokens.get(run, "")
                if run in self.paused or run not in self.live or token.count(":") < 3 or \
                        self.live[run][1] in RW_LANES:
                    continue
                if not send(pgid, signal.SIGSTOP, group=True):
                    continue
                t0 = now()
                self.paused.add(run)
                self.hangs += 1
                session = token.split(":")[2]
                if not await asyncio.to_thread(self.destroy_session, session):
                    self.say(f"could not destroy the session of {run}: no hang")
                    send(pgid, signal.SIGCONT, group=True)
                    self.paused.discard(run)
                    return
                self.say(f"hung {run} and destroyed its session")
                limit = time.monotonic() + 30
                while alive(pgid) and time.monotonic() < limit:
                    await asyncio.sleep(0.01)
                gone = now()
                if alive(pgid):
                    self.problems.append(f"{run}: conclave lock did not stop its command, "
                                         "stuck with its session destroyed, within 30 s")
                    send(pgid, signal.SIGKILL, group=True)
                else:
                    self.say(f"{run}: its command stopped {(gone - t0) / 1e9:.1f} s later")
                self.paused.discard(run)
                self.event({"kind": "hang", "run": run, "t0": t0, "t1": gone})
                return
            await asyncio.sleep(0.005)
        self.say("no holder to hang within 30 s")

    def destroy_session(self, session):
        for i in range(getattr(self.server, "count", 1)):
            r = http_call("PUT", self.server.http_address(i), f"/v1/session/destroy/{session}")
            if r and r[0] == 200:
                return r[1] is True
        return False

    async def act(self, action, cycle):
        lanes = self.profile["lanes"]
        words = action.split()
        if words[0] == "pause":
            lane = int(words[1]) if len(words) > 1 else cycle % lanes
            await self.pause(lane, LONG_PAUSE)
        elif words[0] == "brief":
            await self.pause(None, self.rng.uniform(1, 8))
        elif words[0] == "hang":
            await self.hang()
        elif words[0] == "kill":
            if not isinstance(self.server, DevAgent):
                await self.restart(words[1])
        elif words[0] == "restart":
            await self.restart(words[1] if len(words) > 1 else
                               "leader" if cycle % 2 else "follower")

    async def chaos(self):
        """Runs the plan (one cycle, or cycles until the target); returns when done."""
        tasks = [asyncio.create_task(self.cycle_faults())]
        plan, cycle_seconds = ((LONG_PLAN, LONG_CYCLE) if self.args.long
                               else (SHORT_PLAN, SHORT_SECONDS))
        cycle = 0
        try:
            while True:
                base = time.monotonic()
                for offset, action in plan:
                    tasks.append(asyncio.create_task(self.act_at(base + offset, action, cycle)))
                while time.monotonic() < base + cycle_seconds:
                    await asyncio.sleep(1)
                    if self.done():
                        return
                cycle += 1
                if not self.args.long or self.done():
                    return
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for p in self.proxies:
                p.set_mode("clean")

    def done(self):
        target = self.profile["target"]
        return (target is not None and self.store.completed >= target) or \
            time.monotonic() - self.t0 > self.profile["max_seconds"] + 60

    async def act_at(self, when, action, cycle):
        await asyncio.sleep(max(0, when - time.monotonic()))
        await self.act(action, cycle)

    async def audit(self):
        """Every 3 s: a session whose run exited, saying it had cleaned up, more than 1 s
        before the read is a leak."""
        while True:
            await asyncio.sleep(3)
            asked = now()
            found = await asyncio.to_thread(self.sessions_and_keys)
            if found:
                self.audits += 1
                self.audit_sessions(found[0], asked)

    def audit_sessions(self, sessions, asked):
        for s in sessions:
            run = s["Name"][len(self.tag) + 1:]
            status, end = self.exited.get(run, (None, None))
            if status in (0, 3, 5, 130, 143) and asked - end > 1e9 and s["ID"] not in self.leaked_ids:
                self.leaked_ids.add(s["ID"])
                self.leaks.append({"what": "session", "id": s["ID"], "run": run,
                                   "when": f"after its run exited {status}"})

    async def progress(self):
        while True:
            await asyncio.sleep(20)
            self.say(f"handoffs={self.store.completed} stale={self.store.stale} "
                     f"faults={self.faults()} runs={len(self.exited)}")

    def faults(self):
        return (sum(p.faults for p in self.proxies) + self.period_faults + self.pauses
                + self.hangs + self.restarts)

    # --- the end -----------------------------------------------------------------------

    async def settle(self):
        """Clean network, contenders still running, until no session of an exited run is
        left (those whose cleanup was cut off expire within 2 x TTL)."""
        limit = time.monotonic() + 2 * TTL + LOCK_DELAY + 20
        while time.monotonic() < limit:
            found = await asyncio.to_thread(self.sessions_and_keys)
            if found is not None:
                stale = [s for s in found[0] if s["Name"][len(self.tag) + 1:] not in self.live]
                if not stale:
                    return
            await asyncio.sleep(1)
        self.say("sessions of exited runs still there after 2 x TTL + lock-delay")

    async def stop_contenders(self, contenders):
        self.stopping = True
        done, pending = await asyncio.wait(contenders, timeout=60)
        for run, (proc, _) in list(self.live.items()):
            self.problems.append(f"{run} still running 60 s after the end: stopped")
            send(proc.pid, signal.SIGTERM, group=True)
        if pending:
            await asyncio.wait(pending, timeout=20)
        for t in done:
            if t.exception():
                raise t.exception()

    async def leftovers(self):
        found = None
        for _ in range(20):
            found = await asyncio.to_thread(self.sessions_and_keys)
            if found == ([], []):
                return
            await asyncio.sleep(0.5)
        if found is None:
            self.problems.append("could not read the server's sessions and keys at the end")
            return
        for s in found[0]:
            if s["ID"] not in self.leaked_ids:
                self.leaks.append({"what": "session", "id": s["ID"], "name": s["Name"],
                                   "when": "at the end"})
        for k in found[1]:
            self.leaks.append({"what": "key", "key": k["Key"], "session": k.get("Session", ""),
                               "when": "at the end"})

    def kill_everything(self):
        """SIGKILL to every run and hold left (paused ones too) and the servers."""
        for proc, _ in list(self.live.values()):
            if proc.returncode is None:
                send(proc.pid, signal.SIGKILL, group=True)
        store = getattr(self, "store", None)
        for pgid in list(store.active.values()) if store else []:
            send(pgid, signal.SIGKILL, group=True)
        if hasattr(self, "server"):
            self.server.stop()

    def copy_conclave(self):
        """Runs a copy of the CLI in the work directory: a rebuild of the original during
        the run must not change it (or make it vanish for a moment)."""
        copy = self.path("conclave")
        for attempt in range(60):
            try:
                shutil.copy2(self.args.conclave, copy)
                if subprocess.run([copy, "lock", "-help"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL).returncode == 0:
                    self.conclave = copy
                    return
            except OSError:
                pass
            time.sleep(1)
        raise RuntimeError(f"{self.args.conclave} does not run")

    async def main(self):
        self.copy_conclave()
        kind = (f"a cluster of {self.args.servers} Consul servers" if self.args.consul_bin
                else "the dev agent")
        self.say(f"chaos {'--long' if self.args.long else '--short'} on {kind}, "
                 f"seed {self.args.seed}, work {self.work}")
        self.start_servers()
        self.proxies = []
        for i in range(getattr(self.server, "count", 1)):
            proxy = FaultProxy(tuple_address(self.server.http_address(i)),
                               random.Random(self.rng.random()))
            await proxy.start()
            self.proxies.append(proxy)
        self.store = FenceStore(self.path("fence.sock"), self.path("fence.jsonl"))
        await self.store.start()
        contenders = [asyncio.create_task(self.contend(i))
                      for i in range(self.profile["contenders"])]
        helpers = [asyncio.create_task(self.audit()), asyncio.create_task(self.progress())]
        try:
            await self.chaos()
            self.say(f"chaos over: handoffs={self.store.completed}; settling")
            await self.settle()
            await self.stop_contenders(contenders)
        finally:
            for t in helpers:
                t.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)
        await self.leftovers()
        for p in self.proxies:
            await p.stop()
        await self.store.stop()
        meta = {"faults": self.faults(), "min_handoffs": self.profile["min_handoffs"],
                "problems": self.problems, "seed": self.args.seed, "tag": self.tag,
                "proxy_faults": {m: sum(p.by_mode[m] for p in self.proxies)
                                 for m in ("drops", "resets", "lost")}}
        with open(self.path("meta.json"), "w") as f:
            json.dump(meta, f)
        with open(self.path("leaks.jsonl"), "w") as f:
            for leak in self.leaks:
                f.write(json.dumps(leak) + "\n")
        self.say(f"done: {len(self.exited)} runs; connections cut: {meta['proxy_faults']}; "
                 f"fault periods: {dict(self.periods)}; {self.pauses} pauses, {self.hangs} "
                 f"hangs, {self.restarts} server restarts, {self.audits} session audits")


def send(pid, sig, group=False):
    """Signals a process (or its process group); False when it is gone. The processes
    signalled are children not yet reaped (conclave lock runs: the driver reaps them only
    after they exited), or groups whose leader is alive: their ids are not reused."""
    try:
        (os.killpg if group else os.kill)(pid, sig)
        return True
    except ProcessLookupError:
        return False


def alive(pid):
    """True while the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def tuple_address(address):
    host, port = address.rsplit(":", 1)
    return host, int(port)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--conclave", required=True, help="the conclave CLI")
    p.add_argument("--consul-bin", help="a Consul executable: run on a cluster of it")
    p.add_argument("--servers", type=int, default=3)
    length = p.add_mutually_exclusive_group(required=True)
    length.add_argument("--short", action="store_true")
    length.add_argument("--long", action="store_true")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--work", help="work directory (default: a new one under $TMPDIR)")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    args = p.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(10 ** 6)
    return args


def main():
    args = parse_args()
    driver = Driver(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        asyncio.run(driver.main())
    except KeyboardInterrupt:
        driver.say("interrupted")
        return 130
    finally:
        driver.kill_everything()
    report = check.check(check.load(driver.work))
    if report.ok() and not args.keep:
        shutil.rmtree(driver.work, ignore_errors=True)
    else:
        print(f"history kept in {driver.work} (seed {args.seed})", flush=True)
    for line in report.lines():
        print(line, flush=True)
    return 0 if report.ok() else 1


if __name__ == "__main__":
    sys.exit(main())
