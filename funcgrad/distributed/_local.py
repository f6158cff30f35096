"""The communicator of a run of one process (no MPI): every collective is the identity.

>>> import numpy as np
>>> from funcgrad.distributed._local import LocalCommunicator
>>> LocalCommunicator().allgather(np.ones(2)).shape
(1, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.processes import Communicator


class LocalCommunicator(Communicator):
    """Rank 0 of a world of 1."""

    rank = 0
    size = 1

    def allreduce(self, x: Any, op: str) -> Any:
        return x.copy()

    def allgather(self, x: Any) -> Any:
        return x[None].copy()

    def broadcast(self, x: Any, root: int) -> Any:
        return x.copy()

    def reduce_scatter(self, x: Any, op: str) -> Any:
        return x[0].copy()

    def alltoall(self, x: Any) -> Any:
        return x.copy()

    def permute(self, x: Any, perm: Sequence[tuple[int, int]]) -> Any:
        return x.copy() if (0, 0) in tuple(perm) else x * 0

    def send(self, x: Any, dest: int, tag: int) -> None:
        raise RuntimeError("send: a run of one process has no other rank to send to")

    def recv(self, like: Any, source: int | None, tag: int | None) -> tuple[Any, int]:
        raise RuntimeError("recv: a run of one process has no other rank to receive from")

    def isend(self, x: Any, dest: int, tag: int) -> Any:
        return self.send(x, dest, tag)

    def recv_buffer(self, like: Any) -> Any:
        return like.copy()

    def irecv(self, buf: np.ndarray, source: int | None, tag: int | None) -> Any:
        return self.recv(buf, source, tag)

    def split(self, color: int | None, key: int) -> LocalCommunicator | None:
        return None if color is None else LocalCommunicator()

    def barrier(self) -> None:
        return None

    def abort(self, code: int) -> None:
        raise SystemExit(code)


__all__ = ["LocalCommunicator"]
