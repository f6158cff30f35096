"""``torch.cuda``: devices, streams and events, synchronisation and memory figures, on CuPy.

Every kernel and copy funcgrad makes goes to CuPy's current stream, so ``with
torch.cuda.stream(s):`` puts a block's GPU work on ``s`` as in PyTorch. Streams made here
are non-blocking (as PyTorch's pool streams are): order them against the default stream with
``wait_stream`` or events, as PyTorch programs do.

>>> import funcgrad.torch as torch
>>> isinstance(torch.cuda.is_available(), bool)
True
>>> with torch.cuda.stream(None):  # no stream: a no-op, with or without a GPU
...     pass
"""

from __future__ import annotations

from typing import Any

from funcgrad.devices import get_backend, require_device
from funcgrad.torch import _cuda_random
from funcgrad.torch._device import cuda_available


def is_available() -> bool:
    """True when CuPy finds a CUDA device."""
    return cuda_available()


def device_count() -> int:
    """The number of CUDA devices (0 without one)."""
    return len(get_backend("cupy").devices()) if is_available() else 0


def _index(device: Any = None) -> int:
    """A device index from ``None`` (the current one), an int, ``"cuda:N"`` or a device."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return current_device() if device < 0 else device
    index = None if isinstance(device, str) else getattr(device, "index", None)
    if index is not None or getattr(device, "type", None) == "cuda":
        return current_device() if index is None else int(index)
    text = str(device)
    plat, _, idx = text.partition(":")
    if plat != "cuda" or (idx and not idx.isdigit()):
        raise ValueError(f"Expected a cuda device, but got: {text}")
    return int(idx) if idx else current_device()


def _cupy(device: Any = None) -> Any:
    """CuPy, once ``device`` is known to be usable (``DeviceError`` says why not)."""
    require_device(f"cuda:{_index(device)}")
    import cupy  # noqa: PLC0415

    return cupy


def current_device() -> int:
    """The index of the current CUDA device (0 without one)."""
    if not is_available():
        return 0
    import cupy  # noqa: PLC0415

    return int(cupy.cuda.runtime.getDevice())


def set_device(device: Any) -> None:
    """Make ``device`` (an index or ``"cuda:N"``) the current one (a negative index: no
    change, as in PyTorch)."""
    if isinstance(device, int) and device < 0:
        return
    _cupy(device).cuda.Device(_index(device)).use()


class device:  # noqa: N801 - PyTorch's name
    """``with torch.cuda.device(1):`` makes a device current for a block."""

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else _index(device)
        self._prev: list[int] = []

    def __enter__(self) -> None:
        if self.idx >= 0:
            self._prev.append(current_device())
            set_device(self.idx)

    def __exit__(self, *exc: object) -> None:
        if self.idx >= 0:
            set_device(self._prev.pop())


def synchronize(device: Any = None) -> None:
    """Wait for all work queued on the device, on every stream."""
    if is_available():
        cp = _cupy(device)
        with cp.cuda.Device(_index(device)):
            cp.cuda.runtime.deviceSynchronize()


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator (random CUDA tensors and dropout masks of CUDA
    tensors are drawn there); the CPU's is left alone, as in PyTorch.

    >>> import funcgrad.torch as torch
    >>> torch.cuda.manual_seed(0)  # kept for when a GPU draws (ignored without one)
    """
    _cuda_random.manual_seed(seed, current_device())


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator."""
    _cuda_random.manual_seed(seed)


def seed() -> None:
    """Seed the current GPU's generator from the operating system."""
    _cuda_random.manual_seed(_cuda_random.fresh_seed(), current_device())


def seed_all() -> None:
    """Seed every GPU's generator from the operating system (one seed for all)."""
    _cuda_random.manual_seed(_cuda_random.fresh_seed())


def initial_seed() -> int:
    """The seed of the current GPU's generator (``DeviceError`` without a GPU)."""
    _cupy()
    return _cuda_random.initial_seed(current_device())


# ------------------------------------------------------------------ streams and events


class Stream:
    """A CUDA stream (CuPy's, created non-blocking as PyTorch's are); ``cuda_stream`` is
    its handle.

    ``s.wait_stream(torch.cuda.current_stream())`` orders ``s`` after the work queued so far
    on the current stream; ``with torch.cuda.stream(s):`` sends a block's work to ``s``.
    """

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        cp = _cupy(device)
        idx = _index(device)
        with cp.cuda.Device(idx):
            self._cp = cp.cuda.Stream(non_blocking=True)
        self._device = idx
        self.priority = priority

    @classmethod
    def _of(cls, cp_stream: Any, idx: int) -> Stream:
        s = object.__new__(cls)
        s._cp, s._device, s.priority = cp_stream, idx, 0
        return s

    @property
    def cuda_stream(self) -> int:
        return int(self._cp.ptr)

    @property
    def device(self) -> Any:
        from funcgrad.torch._device import device as torch_device  # noqa: PLC0415

        return torch_device("cuda", self._device)

    def query(self) -> bool:
        """Whether all work queued on the stream has finished."""
        return bool(self._cp.done)

    def synchronize(self) -> None:
        """Wait for all work queued on the stream."""
        self._cp.synchronize()

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one by default) at this point of the stream."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        """Later work on this stream waits until ``event`` has happened."""
        event.wait(self)

    def wait_stream(self, stream: Stream) -> None:
        """Later work on this stream waits for the work queued so far on ``stream``."""
        self.wait_event(stream.record_event())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (other.cuda_stream, other._device) == \
            (self.cuda_stream, self._device)

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self._device))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device=cuda:{self._device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: a point in a stream's work to wait for, query or time.

    Created lazily at the first ``record`` (as in PyTorch); ``elapsed_time`` needs
    ``enable_timing=True`` on both events.
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False, external: bool = False) -> None:
        self.enable_timing = enable_timing
        self.blocking = blocking
        self._cp: Any = None

    @property
    def cuda_event(self) -> int:
        return 0 if self._cp is None else int(self._cp.ptr)

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream`` (the current stream by default)."""
        stream = current_stream() if stream is None else stream
        if self._cp is None:
            cp = _cupy(stream._device)
            self._cp = cp.cuda.Event(block=self.blocking, disable_timing=not self.enable_timing)
        self._cp.record(stream._cp)

    def wait(self, stream: Stream | None = None) -> None:
        """Make ``stream`` (the current one by default) wait for this event."""
        if self._cp is not None:
            stream = current_stream() if stream is None else stream
            stream._cp.wait_event(self._cp)

    def query(self) -> bool:
        """Whether the work before the recorded point has finished (True if unrecorded)."""
        return True if self._cp is None else bool(self._cp.done)

    def synchronize(self) -> None:
        """Wait until the event has happened."""
        if self._cp is not None:
            self._cp.synchronize()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to ``end_event``."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument "
                             "'enable_timing=True'.")
        if self._cp is None or end_event._cp is None:
            raise ValueError("Both events must be recorded before calculating elapsed "
                             "time.")
        return float(_cupy().cuda.get_elapsed_time(self._cp, end_event._cp))

    def __repr__(self) -> str:
        if self._cp is None:
            return "<torch.cuda.Event uninitialized>"
        return f"<torch.cuda.Event {self.cuda_event:#x}>"


class StreamContext:
    """``with torch.cuda.stream(s):``: ``s`` is the current stream inside (``None``: no
    change)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        if self.stream is not None:
            self.stream._cp.__enter__()

    def __exit__(self, *exc: object) -> None:
        if self.stream is not None:
            self.stream._cp.__exit__(*exc)


def stream(stream: Stream | None) -> StreamContext:
    """A context in which ``stream`` is the current stream.

    >>> with stream(None):
    ...     pass
    """
    return StreamContext(stream)


def current_stream(device: Any = None) -> Stream:
    """The stream that GPU work goes to now."""
    cp = _cupy(device)
    idx = _index(device)
    return Stream._of(cp.cuda.get_current_stream(idx), idx)


def default_stream(device: Any = None) -> Stream:
    """The device's default (legacy null) stream."""
    cp = _cupy(device)
    return Stream._of(cp.cuda.Stream.null, _index(device))


def set_stream(stream: Stream | None) -> None:
    """Make ``stream`` the current stream (until changed again; None: no change)."""
    if stream is not None:
        stream._cp.use()


# ------------------------------------------------------------------ device facts, memory


class _CudaDeviceProperties:
    def __init__(self, props: dict[str, Any]) -> None:
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.major, self.minor = int(props["major"]), int(props["minor"])
        self.total_memory = int(props["totalGlobalMem"])
        self.multi_processor_count = int(props["multiProcessorCount"])

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    """Name, compute capability, memory and multiprocessor count of a device."""
    cp = _cupy(device)
    return _CudaDeviceProperties(cp.cuda.runtime.getDeviceProperties(_index(device)))


def get_device_name(device: Any = None) -> str:
    """The device's name, e.g. ``'NVIDIA H200'``."""
    return get_device_properties(device).name


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The device's compute capability as ``(major, minor)``."""
    p = get_device_properties(device)
    return p.major, p.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 runs on the device (compute capability 8.0 or above, or emulated)."""
    if not is_available():
        return False
    return get_device_capability()[0] >= 8 or including_emulation


def _pool() -> Any:
    import cupy  # noqa: PLC0415

    return cupy.get_default_memory_pool()


def memory_allocated(device: Any = None) -> int:
    """Bytes held by live device arrays (CuPy's memory pool; 0 without a device)."""
    return int(_pool().used_bytes()) if is_available() else 0


def memory_reserved(device: Any = None) -> int:
    """Bytes the memory pool holds, live arrays and cached free blocks (0 without a
    device)."""
    return int(_pool().total_bytes()) if is_available() else 0


# Peaks of the pool's used and held bytes, counted by an allocator hook installed by the
# first call that asks for a peak (a Python call per allocation is not paid before).
_PEAKS: list[int] = [0, 0]
_TRACKING: list[bool] = [False]


def _track() -> Any:
    pool = _pool()
    if not _TRACKING[0]:
        import cupy  # noqa: PLC0415

        def malloc(size: int) -> Any:
            used = pool.used_bytes()  # the new block is not counted yet
            mem = pool.malloc(size)
            _PEAKS[0] = max(_PEAKS[0], used + size)
            _PEAKS[1] = max(_PEAKS[1], pool.total_bytes())
            return mem

        cupy.cuda.set_allocator(malloc)
        _TRACKING[0] = True
        _PEAKS[:] = [pool.used_bytes(), pool.total_bytes()]
    return pool


def max_memory_allocated(device: Any = None) -> int:
    """The most bytes live arrays held since the last ``reset_peak_memory_stats`` (counted
    from the first call of a peak function; 0 without a device)."""
    if not is_available():
        return 0
    pool = _track()
    return max(_PEAKS[0], int(pool.used_bytes()))


def max_memory_reserved(device: Any = None) -> int:
    """The most bytes the memory pool held since the last ``reset_peak_memory_stats``."""
    if not is_available():
        return 0
    pool = _track()
    return max(_PEAKS[1], int(pool.total_bytes()))


def reset_peak_memory_stats(device: Any = None) -> None:
    """Start the peaks again from the current figures."""
    if is_available():
        pool = _track()
        _PEAKS[:] = [int(pool.used_bytes()), int(pool.total_bytes())]


def reset_max_memory_allocated(device: Any = None) -> None:
    import warnings  # noqa: PLC0415

    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def memory_stats(device: Any = None) -> dict[str, int]:
    """PyTorch's memory statistics that a CuPy pool can give (current and peak bytes
    allocated and reserved)."""
    return {"allocated_bytes.all.current": memory_allocated(device),
            "allocated_bytes.all.peak": max_memory_allocated(device),
            "reserved_bytes.all.current": memory_reserved(device),
            "reserved_bytes.all.peak": max_memory_reserved(device),
            "num_alloc_retries": 0, "num_ooms": 0}


def empty_cache() -> None:
    """Give the pool's cached free blocks back to the driver."""
    if is_available():
        _pool().free_all_blocks()


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """``(free, total)`` device memory in bytes, as the driver reports them."""
    cp = _cupy(device)
    with cp.cuda.Device(_index(device)):
        free, total = cp.cuda.runtime.memGetInfo()
    return int(free), int(total)


__all__ = ["Event", "Stream", "StreamContext", "amp", "current_device", "current_stream",
           "default_stream", "device", "device_count", "empty_cache", "get_device_capability",
           "get_device_name", "get_device_properties", "initial_seed", "is_available",
           "is_bf16_supported", "manual_seed", "manual_seed_all", "max_memory_allocated",
           "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_max_memory_allocated", "reset_peak_memory_stats", "seed",
           "seed_all", "set_device", "set_stream", "stream", "synchronize"]

from funcgrad.torch._legacy_tensor_types import CUDA_TYPES as _LEGACY_TYPES  # noqa: E402
from funcgrad.torch.cuda import amp  # noqa: E402 - it reads this module's is_available

globals().update(_LEGACY_TYPES)  # torch.cuda.FloatTensor...
