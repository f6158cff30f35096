"""The TCP communicator inside one process (each rank a thread, real sockets): every
collective against NumPy on drawn shapes and dtypes, sub-communicators, point-to-point
messages, and clear errors for timeouts, lost peers and bad addresses."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funcgrad.distributed import DistributedError
from funcgrad.distributed._tcp import TCPCommunicator


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(n: int, body: Callable[[TCPCommunicator], Any], timeout: float | None = 30.0
         ) -> list[Any]:
    """``body(comm)`` on ranks 0..n-1 (threads); their results, or the first error raised."""
    port = _free_port()
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def rank(r: int) -> None:
        try:
            comm = TCPCommunicator.connect(f"127.0.0.1:{port}", n, r, timeout=timeout,
                                           connect_timeout=30)
            try:
                results[r] = body(comm)
            finally:
                comm.close()
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            errors.append(e)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if errors:
        raise errors[0]
    return results


_DTYPES = [np.float64, np.float32, np.float16, ml_dtypes.bfloat16, np.int64, np.int32,
           np.uint8, np.bool_]


@settings(max_examples=12, deadline=None)
@given(n=st.integers(2, 3), shape=st.lists(st.integers(0, 3), max_size=3),
       dtype=st.sampled_from(_DTYPES), seed=st.integers(0, 2 ** 31 - 1))
def test_collectives_match_numpy(n: int, shape: list[int], dtype: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = [(rng.integers(0, 2, shape) if dtype is np.bool_ else
             rng.integers(1, 5, shape)).astype(dtype) for _ in range(n)]
    rows = [rng.integers(0, 9, (n, *shape)).astype(dtype) for _ in range(n)]

    def body(c: TCPCommunicator) -> dict[str, Any]:
        me = c.rank
        return {"sum": c.allreduce(data[me], "max" if dtype is np.bool_ else "sum"),
                "gather": c.allgather(data[me]), "bcast": c.broadcast(data[me], n - 1),
                "a2a": c.alltoall(rows[me]), "rs": c.reduce_scatter(rows[me], "max"),
                "perm": c.permute(data[me], [(r, (r + 1) % n) for r in range(n)]),
                "reduce": c.reduce(data[me], "min", 0)}

    got = _run(n, body)
    stacked = np.stack(data)
    for r, out in enumerate(got):
        want_sum = stacked.max(0) if dtype is np.bool_ else \
            np.add.reduce(stacked, 0, dtype=dtype)
        np.testing.assert_array_equal(out["sum"], want_sum)
        assert out["sum"].dtype == np.dtype(dtype) and out["gather"].dtype == np.dtype(dtype)
        np.testing.assert_array_equal(out["gather"], stacked)
        np.testing.assert_array_equal(out["bcast"], data[n - 1])
        np.testing.assert_array_equal(out["a2a"], np.stack([rows[s][r] for s in range(n)]))
        np.testing.assert_array_equal(out["rs"], np.stack(rows).max(0)[r])
        np.testing.assert_array_equal(out["perm"], data[(r - 1) % n])
    np.testing.assert_array_equal(got[0]["reduce"], stacked.min(0))


def test_point_to_point_sub_communicators_and_barrier() -> None:
    def body(c: TCPCommunicator) -> Any:
        me = c.rank
        if me == 0:
            c.send(np.array([1.5, 2.5]), 2, tag=7)
            c.send(np.array([9.0, 9.0]), 1, tag=3)
        got = None
        if me == 2:
            got = c.recv(np.zeros(2), None, 7)
        if me == 1:
            req = c.irecv(c.recv_buffer(np.zeros(2)), 0, 3)
            req.Wait()
            got = (req.buf, 0)
        sub = c.split(me % 2, -me)  # evens: ranks 2, 0 by key; odds: 1 alone
        assert sub is not None
        total = sub.allreduce(np.array(float(me)), "sum")
        none = c.split(None if me == 1 else 0, 0)
        c.barrier()
        return got, sub.rank, sub.size, float(total), none is None

    out = _run(3, body)
    assert out[2][0][1] == 0 and out[2][0][0].tolist() == [1.5, 2.5]
    assert out[1][0][0].tolist() == [9.0, 9.0]
    assert [o[1:4] for o in out] == [(1, 2, 2.0), (0, 1, 1.0), (0, 2, 2.0)]
    assert [o[4] for o in out] == [False, True, False]


def test_a_collective_that_waits_too_long_names_itself() -> None:
    def body(c: TCPCommunicator) -> None:
        if c.rank == 0:
            c.allreduce(np.ones(2), "sum")  # rank 1 never joins (but stays connected)
        else:
            time.sleep(2.0)

    with pytest.raises(DistributedError, match=r"all_reduce\(sum\) did not complete within "
                                               r"0.5 s \(waiting for process\(es\) \[1\]\)"):
        _run(2, body, timeout=0.5)


def test_a_peer_that_leaves_is_named() -> None:
    def body(c: TCPCommunicator) -> None:
        if c.rank == 1:
            c.t.close()
            return
        c.broadcast(np.ones(1), 1)

    with pytest.raises(DistributedError, match="broadcast: process 1 left the run"):
        _run(2, body)


def test_sending_to_a_peer_that_left_is_named() -> None:
    def body(c: TCPCommunicator) -> None:
        if c.rank == 1:
            c.t.close()
            return
        time.sleep(0.3)
        for _ in range(50):  # (the first writes may still reach the socket's buffer)
            c.send(np.ones(1 << 16), 1, tag=0)

    with pytest.raises(DistributedError, match="sending to process 1: it left the run"):
        _run(2, body)


def test_bad_addresses_and_ranks() -> None:
    with pytest.raises(DistributedError, match="a coordinator address is host:port"):
        TCPCommunicator.connect("localhost", 2, 0)
    with pytest.raises(DistributedError, match="rank 2 is outside 0..1"):
        TCPCommunicator.connect("localhost:1", 2, 2)
    with pytest.raises(DistributedError, match="could not connect to 127.0.0.1:.* within"):
        TCPCommunicator.connect(f"127.0.0.1:{_free_port()}", 2, 1, connect_timeout=0.3)
