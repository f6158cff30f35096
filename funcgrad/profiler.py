"""JAX's ``jax.profiler``: trace annotated regions (and jit's tracing and compiling) to a
Chrome trace file that Perfetto and ``chrome://tracing`` open.

``start_trace(log_dir)`` ... ``stop_trace()`` writes
``log_dir/plugins/profile/<run>/<host>.trace.json.gz`` (the folder layout JAX's TensorBoard
plugin reads) with one complete event per :class:`TraceAnnotation` region, step and
annotated call, and one per jit tracing and backend compilation.

>>> import gzip, json, pathlib, tempfile
>>> import funcgrad as jax
>>> d = tempfile.mkdtemp()
>>> with jax.profiler.trace(d):
...     with jax.profiler.TraceAnnotation("work"):
...         _ = jax.numpy.ones(3) * 2
>>> f = next(pathlib.Path(d).glob("plugins/profile/*/*.trace.json.gz"))
>>> [e["name"] for e in json.load(gzip.open(f))["traceEvents"] if e["ph"] == "X"]
['work']
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import gzip
import json
import os
import pathlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from funcgrad import monitoring


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.log_dir: str | None = None
        self.events: list[dict[str, Any]] = []
        self.perfetto = False


_state = _State()


def _now_us() -> float:
    return time.perf_counter_ns() / 1000.0


def _record(name: str, start_us: float, end_us: float, args: dict[str, Any]) -> None:
    if _state.log_dir is None:
        return
    ev = {"name": name, "ph": "X", "ts": start_us, "dur": end_us - start_us,
          "pid": os.getpid(), "tid": threading.get_ident()}
    if args:
        ev["args"] = {k: v if isinstance(v, (int, float, str, bool)) else repr(v)
                      for k, v in args.items()}
    _state.events.append(ev)


def _compile_listener(event: str, duration: float, **kwargs: Any) -> None:
    end = _now_us()
    _record(event, end - duration * 1e6, end, dict(kwargs))


def start_trace(log_dir: os.PathLike[str] | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options: Any = None) -> None:
    """Start collecting trace events (one trace at a time) for ``stop_trace`` to write
    under ``log_dir``."""
    with _state.lock:
        if _state.log_dir is not None:
            raise RuntimeError("Profile has already been started. "
                               "Only one profile may be run at a time.")
        _state.log_dir = str(log_dir)
        _state.events = []
        _state.perfetto = bool(create_perfetto_trace or create_perfetto_link)
        monitoring.register_event_duration_secs_listener(_compile_listener)


def stop_trace() -> None:
    """Stop the trace and write its file (see the module)."""
    with _state.lock:
        if _state.log_dir is None:
            raise RuntimeError("No profile started")
        log_dir, events = _state.log_dir, _state.events
        _state.log_dir, _state.events = None, []
        with contextlib.suppress(AssertionError):
            monitoring.unregister_event_duration_listener(_compile_listener)
    run = datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S")
    folder = pathlib.Path(log_dir) / "plugins" / "profile" / run
    folder.mkdir(parents=True, exist_ok=True)
    meta = [{"name": "process_name", "ph": "M", "pid": os.getpid(),
             "args": {"name": "funcgrad (host)"}}]
    trace = {"displayTimeUnit": "ns", "traceEvents": meta + events}
    with gzip.open(folder / f"{socket.gethostname()}.trace.json.gz", "wt") as fp:
        json.dump(trace, fp)
    if _state.perfetto:
        with gzip.open(folder / "perfetto_trace.json.gz", "wt") as fp:
            json.dump(trace, fp)


@contextlib.contextmanager
def trace(log_dir: os.PathLike[str] | str, create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False, profiler_options: Any = None) -> Iterator[None]:
    """``start_trace`` on entry, ``stop_trace`` on exit (see the module example)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A named region of the trace (with ``kwargs`` as its arguments).

    >>> with TraceAnnotation("load", batch=3):
    ...     pass
    """

    def __init__(self, name: str, **kwargs: Any) -> None:
        self.name = name
        self.kwargs = kwargs
        self._start = 0.0

    def __enter__(self) -> TraceAnnotation:
        self._start = _now_us()
        return self

    def __exit__(self, *exc: Any) -> None:
        _record(self.name, self._start, _now_us(), self.kwargs)


class StepTraceAnnotation(TraceAnnotation):
    """A training step's region: ``StepTraceAnnotation("train", step_num=i)``.

    >>> with StepTraceAnnotation("train", step_num=0):
    ...     pass
    """


def annotate_function(func: Callable[..., Any], name: str | None = None,
                      **decorator_kwargs: Any) -> Callable[..., Any]:
    """``func`` with each call traced as a region named ``name`` (its qualified name).

    >>> @annotate_function
    ... def f(x):
    ...     return x + 1
    >>> f(1)
    2
    """
    label = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


__all__ = ["StepTraceAnnotation", "TraceAnnotation", "annotate_function", "start_trace",
           "stop_trace", "trace"]
