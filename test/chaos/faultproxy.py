# SPDX-License-Identifier: BSL-1.0
"""A TCP proxy that misbehaves on demand, between the contenders and one Consul server.

    proxy = FaultProxy(("127.0.0.1", 8500)); await proxy.start(); proxy.address -> "127.0.0.1:P"
    proxy.set_mode("resets")   # or clean, latency, drops, lost, blackhole

Modes (the driver switches them over time; every mode but clean counts its faults):

- clean: bytes pass untouched.
- latency: every chunk, either way, waits 20-200 ms (order kept).
- drops: each chunk has a chance to end the connection instead: both sides closed (FIN).
- resets: the same with an RST to both sides (SO_LINGER 0, then close).
- lost: requests reach the server, but each response has a chance to be swallowed, and the
  connection closed: the client cannot tell whether its write was applied.
- blackhole: nothing is forwarded, either way, until the mode changes; connections stay
  open, new ones are accepted (and wait).

`faults` counts the connections ended by drops, resets and lost (the driver counts the
latency and black hole periods).

`upstream` may be changed at any time (a restarted dev agent listens elsewhere): new
connections go there. A server that does not answer the connect makes the proxy reset the
client's connection.
"""
import asyncio
import random
import socket
import struct

MODES = ("clean", "latency", "drops", "resets", "lost", "blackhole")


def _abort(writer, rst):
    """Closes one side at once; with an RST when `rst`."""
    if writer.is_closing():
        return
    if rst:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
    writer.transport.abort()


class FaultProxy:
    def __init__(self, upstream, rng=None, chance=0.04):
        self.upstream = upstream          # (host, port)
        self.rng = rng or random.Random()
        self.chance = chance              # per chunk, in drops/resets/lost
        self.mode = "clean"
        self.faults = 0
        self.by_mode = {m: 0 for m in MODES}
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._conns = set()               # (client writer, upstream writer) pairs
        self._server = None
        self.address = None

    async def start(self, port=0):
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        self.address = "127.0.0.1:%d" % self._server.sockets[0].getsockname()[1]

    async def stop(self):
        if self._server:
            self._server.close()
        self.close_all(rst=False)
        self._flowing.set()

    def _count(self, mode, n=1):
        self.faults += n
        self.by_mode[mode] += n

    def set_mode(self, mode):
        assert mode in MODES, mode
        if mode == self.mode:
            return
        self.mode = mode
        if mode == "blackhole":
            self._flowing.clear()
        else:
            self._flowing.set()

    def close_all(self, rst):
        """Ends every connection (a server that died takes its connections along)."""
        for client, up in list(self._conns):
            _abort(client, rst)
            _abort(up, rst)

    async def _serve(self, reader, writer):
        try:
            await self._flowing.wait()
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(*self.upstream), 5)
        except (OSError, asyncio.TimeoutError):
            _abort(writer, rst=True)
            return
        pair = (writer, up_writer)
        self._conns.add(pair)
        try:
            await asyncio.gather(self._pump(reader, up_writer, pair, request=True),
                                 self._pump(up_reader, writer, pair, request=False))
        finally:
            self._conns.discard(pair)
            for w in pair:
                _abort(w, rst=False)

    async def _pump(self, reader, writer, pair, request):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    if writer.can_write_eof() and not writer.is_closing():
                        writer.write_eof()
                    return
                await self._flowing.wait()
                mode = self.mode
                if mode == "latency":
                    await asyncio.sleep(self.rng.uniform(0.02, 0.2))
                elif mode in ("drops", "resets") and self.rng.random() < self.chance:
                    self._count(mode)
                    for w in pair:
                        _abort(w, rst=mode == "resets")
                    return
                elif mode == "lost" and not request and self.rng.random() < self.chance:
                    self._count(mode)
                    for w in pair:
                        _abort(w, rst=False)
                    return
                if writer.is_closing():
                    return
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            for w in pair:
                _abort(w, rst=False)
