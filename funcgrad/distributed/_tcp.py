"""A communicator over TCP sockets, for runs whose processes no MPI launcher started:
``torch.multiprocessing.spawn`` with ``init_process_group(rank=, world_size=)``, ``torchrun``'s
``env://`` (``MASTER_ADDR``/``MASTER_PORT``, ``RANK``/``WORLD_SIZE``), or
``funcgrad.distributed.initialize(coordinator_address=, num_processes=, process_id=)``.

Rendezvous: rank 0 listens at the coordinator address; every other rank connects, says
its rank and the port it listens on, and gets the table of all ranks' addresses; then each
pair of ranks holds one connection (rank 0's are the rendezvous ones). A reader thread per
connection files incoming messages by (group, tag); collectives use their own negative tags,
numbered in the order the processes call them, so they never meet user messages.

Collectives exchange whole arrays with every peer and reduce in rank order, so every
process gets the same bits. That moves ``size`` times more data than a ring: meant for the
modest runs of one machine (use MPI or NCCL to scale).
"""

from __future__ import annotations

import functools
import json
import pickle
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.distributed import DistributedError
from funcgrad.distributed._mpi import _back
from funcgrad.distributed._mpi import _host as _mpi_host
from funcgrad.processes import Communicator

_HEADER = struct.Struct("!qqQI")  # group, tag, payload bytes, meta bytes
_REDUCE = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply,
           "band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor}


def _recv_exact(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("the peer closed the connection")
        got += k
    return buf


def _send_line(sock: socket.socket, obj: Any) -> None:
    data = json.dumps(obj).encode()
    sock.sendall(struct.pack("!I", len(data)) + data)


def _recv_line(sock: socket.socket) -> Any:
    (n,) = struct.unpack("!I", _recv_exact(sock, 4))
    return json.loads(bytes(_recv_exact(sock, n)))


class _Transport:
    """The connections of one process to all the others, and what has arrived on them."""

    def __init__(self, host: str, port: int, size: int, rank: int,
                 connect_timeout: float) -> None:
        self.size, self.rank = size, rank
        self.peers: dict[int, socket.socket] = {}
        self.send_locks: dict[int, threading.Lock] = {}
        self.inbox: dict[tuple[int, int, int], deque[tuple[dict[str, Any], bytearray]]] = {}
        self.arrived = threading.Condition()
        self.gone: dict[int, str] = {}
        listener = socket.create_server(("", 0))
        my_port = listener.getsockname()[1]
        if rank == 0:
            server = socket.create_server(("", port), reuse_port=False)
            server.settimeout(connect_timeout)
            table: dict[int, list[Any]] = {}
            for _ in range(size - 1):
                try:
                    conn, addr = server.accept()
                except TimeoutError:
                    raise DistributedError(
                        f"rank 0 waited {connect_timeout:g} s at port {port} and "
                        f"{size - 1 - len(table)} of the {size - 1} other processes did not "
                        "connect") from None
                conn.settimeout(None)
                hello = _recv_line(conn)
                r = int(hello["rank"])
                if r in table or not 0 < r < size:
                    raise DistributedError(f"a process joined as rank {r}, which is taken or "
                                           f"outside 0..{size - 1}")
                table[r] = [addr[0], int(hello["port"])]
                self.peers[r] = conn
            server.close()
            for conn in self.peers.values():
                _send_line(conn, table)
        else:
            conn = self._connect(host, port, connect_timeout)
            _send_line(conn, {"rank": rank, "port": my_port})
            table = {int(k): v for k, v in _recv_line(conn).items()}
            self.peers[0] = conn
            for r in range(1, rank):
                c = self._connect(table[r][0], table[r][1], connect_timeout)
                _send_line(c, {"rank": rank})
                self.peers[r] = c
            listener.settimeout(connect_timeout)
            for _ in range(size - 1 - rank):
                c, _addr = listener.accept()
                c.settimeout(None)
                self.peers[int(_recv_line(c)["rank"])] = c
        listener.close()
        for r, c in self.peers.items():
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.send_locks[r] = threading.Lock()
            threading.Thread(target=self._read, args=(r, c), daemon=True,
                             name=f"funcgrad-tcp-from-{r}").start()

    @staticmethod
    def _connect(host: str, port: int, timeout: float) -> socket.socket:
        deadline = time.monotonic() + timeout
        while True:
            try:
                conn = socket.create_connection((host, port), timeout=timeout)
                conn.settimeout(None)  # (the timeout was for connecting; reads wait)
                return conn
            except OSError:
                # (The process it connects to may not listen yet.)
                if time.monotonic() > deadline:
                    raise DistributedError(
                        f"could not connect to {host}:{port} within {timeout:g} s: is the "
                        "rank-0 process running, and MASTER_ADDR/MASTER_PORT right?") from None
                time.sleep(0.05)

    def _read(self, r: int, c: socket.socket) -> None:
        try:
            while True:
                group, tag, nbytes, nmeta = _HEADER.unpack(_recv_exact(c, _HEADER.size))
                meta = json.loads(bytes(_recv_exact(c, nmeta)))
                payload = _recv_exact(c, nbytes)
                with self.arrived:
                    self.inbox.setdefault((r, group, tag), deque()).append((meta, payload))
                    self.arrived.notify_all()
        except (ConnectionError, OSError) as e:
            with self.arrived:
                self.gone[r] = str(e)
                self.arrived.notify_all()

    def send(self, dest: int, group: int, tag: int, meta: dict[str, Any],
             payload: bytes | memoryview) -> None:
        m = json.dumps(meta).encode()
        with self.send_locks[dest]:
            sock = self.peers[dest]
            try:
                sock.sendall(_HEADER.pack(group, tag, len(payload), len(m)) + m)
                sock.sendall(payload)
            except OSError as e:
                raise DistributedError(f"sending to process {dest}: it left the run "
                                       f"({e})") from None

    def _match(self, s: int, group: int, tag: int | None) -> deque[Any] | None:
        for (src, g, t), q in self.inbox.items():
            if src == s and g == group and q and (t == tag if tag is not None else t >= 0):
                return q
        return None

    def has(self, sources: Sequence[int], group: int, tag: int | None) -> bool:
        """Whether a matching message has arrived (without taking it)."""
        with self.arrived:
            return any(self._match(s, group, tag) is not None for s in sources)

    def recv(self, sources: Sequence[int], group: int, tag: int | None, timeout: float | None,
             what: str) -> tuple[int, dict[str, Any], bytearray]:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.arrived:
            while True:
                for s in sources:
                    q = self._match(s, group, tag)
                    if q is not None:
                        meta, payload = q.popleft()
                        return s, meta, payload
                for s in sources:
                    if s in self.gone:
                        raise DistributedError(f"{what}: process {s} left the run "
                                               f"({self.gone[s]})")
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise DistributedError(f"{what} did not complete within {timeout:g} s "
                                           f"(waiting for process(es) {list(sources)})")
                self.arrived.wait(left)

    def close(self) -> None:
        for c in self.peers.values():
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()


def _host(x: Any) -> tuple[np.ndarray, Any, Any]:
    """MPI's host form of ``x`` (widened where MPI has no type), keeping a 0-d shape."""
    a, dtype, xp = _mpi_host(x)
    return a.reshape(np.shape(x)), dtype, xp


def _encode(x: Any) -> tuple[dict[str, Any], memoryview, Any]:
    a, dtype, xp = _host(x)
    return {"dtype": a.dtype.name, "shape": list(a.shape)}, a.reshape(-1).view(np.uint8).data, \
        (dtype, xp)


def _decode(meta: dict[str, Any], payload: bytearray, back: Any) -> Any:
    a = np.frombuffer(payload, dtype=np.dtype(meta["dtype"])).reshape(meta["shape"])
    return _back(a, *back)


class TCPCommunicator(Communicator):
    """The processes ``members`` (global ranks, in this communicator's rank order) of one
    transport; ``group`` numbers the communicator so its messages are its own."""

    def __init__(self, transport: _Transport, members: Sequence[int], group: int,
                 timeout: float | None) -> None:
        self.t = transport
        self.members = list(members)
        self.group = group
        self.timeout = timeout
        self._rank = self.members.index(transport.rank)
        self._seq = 0
        self._splits = 0

    @classmethod
    def connect(cls, address: str, size: int, rank: int, timeout: float | None = None,
                connect_timeout: float = 300.0) -> TCPCommunicator:
        """Join the run of ``size`` processes whose rank 0 listens at ``address``
        ("host:port")."""
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise DistributedError(f"a coordinator address is host:port, got {address!r}")
        if not 0 <= rank < size:
            raise DistributedError(f"rank {rank} is outside 0..{size - 1}")
        return cls(_Transport(host, int(port), size, rank, connect_timeout), range(size), 0,
                   timeout)

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def size(self) -> int:
        return len(self.members)

    def set_timeout(self, seconds: float | None) -> None:
        self.timeout = None if not seconds else float(seconds)

    def _tag(self) -> int:
        self._seq += 1
        return -self._seq

    def _others(self) -> list[int]:
        return [r for r in range(self.size) if r != self._rank]

    def _send(self, to: int, tag: int, x: Any) -> Any:
        meta, payload, back = _encode(x)
        self.t.send(self.members[to], self.group, tag, meta, payload)
        return back

    def _recv(self, frm: int | None, tag: int | None, what: str) -> tuple[int, Any]:
        sources = [self.members[frm]] if frm is not None else \
            [self.members[r] for r in self._others()]
        src, meta, payload = self.t.recv(sources, self.group, tag, self.timeout, what)
        return self.members.index(src), (meta, payload)

    def _gather(self, x: Any, what: str) -> tuple[list[Any], Any]:
        """Everyone's ``x``, in rank order (the arrays as sent: host arrays)."""
        tag = self._tag()
        _, dtype, xp = _host(x)
        for r in self._others():
            self._send(r, tag, x)
        parts: list[Any] = [None] * self.size
        parts[self._rank] = _host(x)[0]
        for r in self._others():
            _, (meta, payload) = self._recv(r, tag, what)
            parts[r] = np.frombuffer(payload, np.dtype(meta["dtype"])).reshape(meta["shape"])
        return parts, (dtype, xp)

    def allreduce(self, x: Any, op: str) -> Any:
        parts, back = self._gather(x, f"all_reduce({op})")
        return _back(functools.reduce(_REDUCE[op], parts), *back)

    def allgather(self, x: Any) -> Any:
        parts, back = self._gather(x, "all_gather")
        return _back(np.stack(parts), *back)

    def broadcast(self, x: Any, root: int) -> Any:
        tag = self._tag()
        if self._rank == root:
            for r in self._others():
                self._send(r, tag, x)
            return x.copy()
        _, (meta, payload) = self._recv(root, tag, "broadcast")
        return _decode(meta, payload, _host(x)[1:])

    def alltoall(self, x: Any) -> Any:
        tag = self._tag()
        a, dtype, xp = _host(x)
        for r in self._others():
            self._send(r, tag, a[r])
        out = np.empty_like(a)
        out[self._rank] = a[self._rank]
        for r in self._others():
            _, (meta, payload) = self._recv(r, tag, "all_to_all")
            out[r] = np.frombuffer(payload, np.dtype(meta["dtype"])).reshape(meta["shape"])
        return _back(out, dtype, xp)

    def reduce_scatter(self, x: Any, op: str) -> Any:
        rows = self.alltoall(x)
        a, dtype, xp = _host(rows)
        return _back(functools.reduce(_REDUCE[op], list(a)), dtype, xp)

    def reduce(self, x: Any, op: str, root: int) -> Any:
        tag = self._tag()
        if self._rank != root:
            self._send(root, tag, x)
            return x
        a, dtype, xp = _host(x)
        parts: list[Any] = [None] * self.size
        parts[root] = a
        for r in self._others():
            _, (meta, payload) = self._recv(r, tag, f"reduce({op})")
            parts[r] = np.frombuffer(payload, np.dtype(meta["dtype"])).reshape(meta["shape"])
        return _back(functools.reduce(_REDUCE[op], parts), dtype, xp)

    def permute(self, x: Any, perm: Sequence[tuple[int, int]]) -> Any:
        tag = self._tag()
        a, dtype, xp = _host(x)
        out = np.zeros_like(a)
        for src, dst in perm:
            if src == self._rank:
                if dst == self._rank:
                    out = a.copy()
                else:
                    self._send(dst, tag, a)
        for src, dst in perm:
            if dst == self._rank and src != self._rank:
                _, (meta, payload) = self._recv(src, tag, "ppermute")
                out = np.frombuffer(payload, np.dtype(meta["dtype"])).reshape(
                    meta["shape"]).copy()
        return _back(out, dtype, xp)

    def send(self, x: Any, dest: int, tag: int) -> None:
        self._send(dest, int(tag), x)

    def recv(self, like: Any, source: int | None, tag: int | None) -> tuple[Any, int]:
        src, (meta, payload) = self._recv(source, None if tag is None else int(tag), "recv")
        return _decode(meta, payload, _host(like)[1:]), src

    def isend(self, x: Any, dest: int, tag: int) -> Any:
        """Send now (the data is copied out): the request is already done."""
        self.send(x, dest, tag)
        return _Done()

    def recv_buffer(self, like: Any) -> Any:
        return np.empty_like(_host(like)[0])

    def irecv(self, buf: Any, source: int | None, tag: int | None) -> Any:
        return _PendingRecv(self, buf, source, tag)

    def _exchange_objects(self, obj: Any, what: str) -> list[Any]:
        """Everyone's picklable ``obj``, in rank order."""
        data = np.frombuffer(pickle.dumps(obj), np.uint8)
        tag = self._tag()
        for r in self._others():
            self._send(r, tag, data)
        out: list[Any] = [None] * self.size
        out[self._rank] = obj
        for r in self._others():
            _, (_meta, payload) = self._recv(r, tag, what)
            out[r] = pickle.loads(bytes(payload))
        return out

    def split(self, color: int | None, key: int) -> TCPCommunicator | None:
        self._splits += 1
        # (Every member numbers its splits alike: the new group's number is the same.)
        group = self.group * 1000 + self._splits
        pairs = self._exchange_objects((color, int(key)), "new_group")
        if color is None:
            return None
        mine = sorted((k, r) for r, (c, k) in enumerate(pairs) if c == color)
        return TCPCommunicator(self.t, [self.members[r] for _, r in mine], group,
                               self.timeout)

    def barrier(self) -> None:
        self._gather(np.zeros(1, np.uint8), "barrier")

    def abort(self, code: int) -> None:
        import os  # noqa: PLC0415

        self.t.close()
        os._exit(code)

    def close(self) -> None:
        if self.group == 0:
            self.t.close()


class _Done:
    def Wait(self) -> None:  # noqa: N802 - MPI's request API, as the communicators use it
        return None

    def Test(self) -> bool:  # noqa: N802
        return True


class _PendingRecv:
    """A receive finished by ``Wait`` (the data is filed as it arrives)."""

    def __init__(self, comm: TCPCommunicator, buf: Any, source: int | None,
                 tag: int | None) -> None:
        self.comm, self.buf, self.source, self.tag = comm, buf, source, tag

    def Wait(self) -> None:  # noqa: N802
        got, _ = self.comm.recv(self.buf, self.source, self.tag)
        self.buf[...] = got

    def Test(self) -> bool:  # noqa: N802
        """Finish the receive if its message has arrived."""
        comm = self.comm
        sources = [comm.members[self.source]] if self.source is not None else \
            [comm.members[r] for r in comm._others()]
        if not comm.t.has(sources, comm.group, self.tag):
            return False
        self.Wait()
        return True


__all__ = ["TCPCommunicator"]
