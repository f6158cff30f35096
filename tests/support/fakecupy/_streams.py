"""Streams and events, and the ordering rules a real device enforces between them.

The emulator runs every operation at once on the host, so a program that forgets to order
its streams still gets the right numbers here while on a GPU it would read half-written
memory. To catch that, each buffer remembers the stream and the moment ("tick") of its last
write, and every read on another stream must be ordered after that write, by one of:
- the same stream, or the legacy null stream and a blocking stream (they wait for each
  other, as CUDA's legacy default stream does);
- a host synchronisation since the write (``Stream.synchronize``, ``Device.synchronize``,
  ``Event.synchronize``, a blocking copy to the host on the writing stream);
- an event recorded on the writing stream after the write that the reading stream waited
  for (``Stream.wait_event``).
Anything else raises ``StreamRaceError``. Reads are checked at every operand of a CuPy
function, ufunc, array method, ``copy``/``astype``, host copy and kernel launch; writes are
recorded for every new result, ``out=``, item assignment, upload and every array a kernel
changed.

Not modelled: a write after a read on another stream and memory the pool reuses across
streams (not reported), and ordering that is only transitive, such as an event chain or two
blocking streams ordered through the default stream (reported as races: the safe side for
funcgrad, which only ever uses the current stream).
"""

from __future__ import annotations

import itertools
import threading
import time
import weakref
from typing import Any

import numpy as np

_tick = itertools.count(1)
_ptrs = itertools.count(1)
_local = threading.local()
# id(root buffer) -> (weakref to it, writing stream or None for fresh memory, tick)
_writes: dict[int, tuple[Any, Stream | None, int]] = {}
_device_synced = [0]  # tick of the last whole-device synchronisation


class StreamRaceError(RuntimeError):
    """A read that no stream ordering places after the write it depends on."""


class Stream:
    """``cupy.cuda.Stream``: a queue of device work; ``with`` makes it current."""

    __module__ = "cupy.cuda"
    null: Stream

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False,
                 priority: int | None = None) -> None:
        self.is_null = bool(null)
        self.non_blocking = bool(non_blocking)
        # A distinct fake handle per stream (0 is the legacy default stream's).
        self.ptr = 0 if null else 0x7F00_0000 + 0x100 * next(_ptrs)
        self.device_id = 0 if null else _device_id()
        self.synced = 0  # tick up to which the host has seen this stream's work complete
        self.waited: dict[int, int] = {}  # other stream's ptr -> tick this one waits for

    def synchronize(self) -> None:
        from fakecupy._array import STATS  # noqa: PLC0415

        STATS.syncs += 1
        self.synced = next(_tick)

    @property
    def done(self) -> bool:
        # Work runs at once here, so it is always done; having asked, the host may rely on it.
        self.synced = next(_tick)
        return True

    def record(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        if event.stream is not None:
            key = event.stream.ptr
            self.waited[key] = max(self.waited.get(key, 0), event.tick)

    def use(self) -> Stream:
        _local.base = self
        return self

    def __enter__(self) -> Stream:
        # The streams to return to are the thread's, as CuPy keeps them.
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(current_stream())
        _local.base = self
        return self

    def __exit__(self, *exc: object) -> None:
        _local.base = _local.stack.pop()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self) -> int:
        return hash(self.ptr)

    def __repr__(self) -> str:
        return f"<Stream {self.ptr} (device {self.device_id})>"


class Event:
    """``cupy.cuda.Event``: a point in a stream's work that other streams can wait for."""

    __module__ = "cupy.cuda"

    def __init__(self, block: bool = False, disable_timing: bool = False,
                 interprocess: bool = False) -> None:
        self.stream: Stream | None = None
        self.tick = 0
        self.time: float | None = None
        self.disable_timing = disable_timing
        self.ptr = 0x7E00_0000 + 0x100 * next(_ptrs)

    def record(self, stream: Stream | None = None) -> None:
        self.stream = current_stream() if stream is None else stream
        self.tick = next(_tick)
        self.time = time.perf_counter()

    def synchronize(self) -> None:
        from fakecupy._array import STATS  # noqa: PLC0415

        STATS.syncs += 1
        if self.stream is not None:
            self.stream.synced = max(self.stream.synced, self.tick)

    @property
    def done(self) -> bool:
        if self.stream is not None:
            self.stream.synced = max(self.stream.synced, self.tick)
        return True


def get_elapsed_time(start_event: Event, end_event: Event) -> float:
    """Milliseconds between two recorded events (host time here)."""
    from fakecupy.cuda import driver  # noqa: PLC0415

    if start_event.time is None or end_event.time is None:
        raise driver.CUDADriverError("CUDA_ERROR_INVALID_HANDLE: an event was not recorded")
    if start_event.disable_timing or end_event.disable_timing:
        raise driver.CUDADriverError("CUDA_ERROR_INVALID_HANDLE: an event has timing "
                                     "disabled")
    return (end_event.time - start_event.time) * 1e3


Stream.null = Stream(null=True)


def _device_id() -> int:
    from fakecupy._array import current_device_id  # noqa: PLC0415 - _array imports this

    return current_device_id()


def current_stream() -> Stream:
    return getattr(_local, "base", None) or Stream.null


def device_synchronized() -> None:
    _device_synced[0] = next(_tick)


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _entry(root: np.ndarray) -> tuple[Any, Stream | None, int] | None:
    hit = _writes.get(id(root))
    return hit if hit is not None and hit[0]() is root else None


def _track(root: np.ndarray, stream: Stream | None, tick: int) -> None:
    key = id(root)
    _writes[key] = (weakref.ref(root, lambda _: _writes.pop(key, None)), stream, tick)


def allocated(a: np.ndarray) -> None:
    """Fresh memory: known to the device, written by nobody yet."""
    _track(_root(a), None, 0)


def wrote(a: np.ndarray, stream: Stream | None = None) -> None:
    root = _root(a)
    s = current_stream() if stream is None else stream
    if s.is_null:
        from fakecupy._array import STATS  # noqa: PLC0415

        STATS.null_stream_work += 1
    _track(root, s, next(_tick))


def result(a: np.ndarray) -> None:
    """A result handed out as a device array: new memory is written by the current stream;
    a view of known memory changes nothing."""
    if _entry(_root(a)) is None:
        from fakecupy.cuda import ALLOCATOR  # noqa: PLC0415

        if ALLOCATOR[0] is not None:
            ALLOCATOR[0](_root(a).nbytes)
        wrote(a)


def _ordered(reader: Stream, writer: Stream) -> bool:
    if reader == writer:
        return True
    # CUDA's legacy default stream and blocking streams wait for one another.
    return (reader.is_null and not writer.non_blocking) or \
        (writer.is_null and not reader.non_blocking)


def read(a: np.ndarray, where: str, stream: Stream | None = None) -> None:
    """Raise ``StreamRaceError`` unless the last write of ``a``'s memory is ordered before
    this read on ``stream`` (the current one by default)."""
    hit = _entry(_root(a))
    if hit is None or hit[1] is None:
        return
    writer, tick = hit[1], hit[2]
    reader = current_stream() if stream is None else stream
    if _ordered(reader, writer) or tick <= max(_device_synced[0], writer.synced,
                                               reader.waited.get(writer.ptr, 0)):
        return
    raise StreamRaceError(
        f"{where} reads an array of shape {a.shape} and dtype {a.dtype} on {reader!r}, but "
        f"it was written on {writer!r} and nothing orders that write first: record an "
        "event on the writing stream and wait for it (Stream.wait_event), or synchronize")


def host_synced(stream: Stream | None = None) -> None:
    """A blocking copy to the host waited for ``stream``'s work."""
    s = current_stream() if stream is None else stream
    s.synced = next(_tick)


def live_bytes() -> int:
    """Bytes of device memory held by live arrays (what a memory pool reports as used)."""
    total = 0
    for ref, _, _ in list(_writes.values()):
        root = ref()
        if root is not None:
            total += root.nbytes
    return total
