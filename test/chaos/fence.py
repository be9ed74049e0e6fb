# SPDX-License-Identifier: BSL-1.0
"""The fenced store the holders write to: a unix-socket server with a line protocol, run in
the driver's event loop.

    BEGIN <run> <pgid> <token>      -> OK      a hold starts (the driver may pause it)
    WRITE <epoch> <token> <run>     -> OK | STALE
    READ <epoch> <token> <run>      -> OK | STALE
    END <run>                       -> OK      (closing the connection also ends the hold)

<token> is CONCLAVE_LOCK_TOKEN, "<modify index>:<lock index>:<session>:<key>". A write is
accepted iff (epoch, modify index) is at least the highest accepted so far for that key:
equal is the same grant writing again, lower is a holder that a newer grant has replaced.
The epoch counts the dev agent's restarts, which lose its state and restart its indexes
(see hold.py; -1 when the hold could not tell, always below a known one).

A read is what a `conclave lock -shared` holder does instead (readers of one read-write
lock hold at once with different tokens, so they cannot write through one fence): it is
accepted by the same rule, against the highest write, and changes nothing. A writer's
token is above that of every reader that held before it, so a read refused is a reader
that a later writer replaced (it lost its grant), and a read accepted below a write is a
reader that overlapped a later writer.

Every decision is appended to a JSON-lines log with the time it was taken on
CLOCK_MONOTONIC (time.monotonic_ns, the holders' clock): {"t", "run", "key", "epoch",
"index", "ok", "op"} (op "write" or "read"). The store is one coroutine per connection in
one thread: decisions are totally ordered, in the order of the log.
"""
import asyncio
import json
import time


def lock_key(key):
    """The lock a token's key names: a read-write grant's token names its contender key,
    `<prefix>/.rwlock/<session>.<n>`, whose lock is `<prefix>`."""
    return key.split("/.rwlock/", 1)[0]


def parse_token(token):
    """(modify index, lock key) of a CONCLAVE_LOCK_TOKEN; the key may contain ':'."""
    index, _lock_index, _session, key = token.split(":", 3)
    return int(index), lock_key(key)


class FenceStore:
    def __init__(self, path, log_path):
        self.path = path
        self.highest = {}        # key -> (epoch, index) of the highest accepted write
        self.active = {}         # run -> pgid of the holds in progress
        self.tokens = {}         # run -> token of the holds in progress
        self.accepted = 0
        self.stale = 0
        self.completed = 0       # holds that wrote and said END
        self._log = open(log_path, "a", buffering=1)
        self._server = None

    async def start(self):
        self._server = await asyncio.start_unix_server(self._serve, self.path)

    async def stop(self):
        if self._server:
            self._server.close()
        self._log.close()

    def decide(self, epoch, token, run, op="write"):
        index, key = parse_token(token)
        mine = (epoch, index)
        ok = key not in self.highest or mine >= self.highest[key]
        if ok:
            if op == "write":
                self.highest[key] = mine
            self.accepted += 1
        else:
            self.stale += 1
        self._log.write(json.dumps({"t": time.monotonic_ns(), "run": run, "key": key,
                                    "epoch": epoch, "index": index, "ok": ok,
                                    "op": op}) + "\n")
        return ok

    async def _serve(self, reader, writer):
        run = None
        try:
            while line := await reader.readline():
                words = line.decode().split()
                if words[0] == "BEGIN":
                    run = words[1]
                    self.active[run] = int(words[2])
                    self.tokens[run] = words[3] if len(words) > 3 else ""
                    answer = "OK"
                elif words[0] in ("WRITE", "READ"):
                    ok = self.decide(int(words[1]), words[2], words[3], words[0].lower())
                    answer = "OK" if ok else "STALE"
                elif words[0] == "END":
                    self.active.pop(words[1], None)
                    self.tokens.pop(words[1], None)
                    self.completed += 1
                    answer = "OK"
                else:
                    answer = "ERROR"
                writer.write((answer + "\n").encode())
                await writer.drain()
        except (OSError, ValueError, IndexError):
            pass
        finally:
            if run is not None:
                self.active.pop(run, None)
                self.tokens.pop(run, None)
            writer.close()
