"""``checking_leaks`` (JAX's ``jax_check_tracer_leaks``): when a transformation ends, a
tracer of it that is still referenced from outside the engine's own frames (a global, a
list or closure of the user's) has leaked; the check raises then, naming it, rather
than when the leaked value is next used.

>>> import funcgrad as fg
>>> kept = []
>>> with fg.checking_leaks():
...     fg.grad(lambda x: kept.append(x) or x * 2.0)(1.0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
funcgrad.errors.UnexpectedTracerError: Leaked trace vjp/grad trace ...
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterable
from typing import Any

from funcgrad.errors import UnexpectedTracerError

_CONTAINERS = (list, tuple, set, frozenset)


def _reach(values: Iterable[Any], seen: set[int], depth: int = 0) -> None:
    """Mark the ids of ``values`` and of what containers among them hold."""
    for v in values:
        if id(v) in seen:
            continue
        seen.add(id(v))
        if depth < 8:
            if isinstance(v, _CONTAINERS):
                _reach(v, seen, depth + 1)
            elif isinstance(v, dict):
                _reach(v.values(), seen, depth + 1)


def _engine_frame(frame: Any) -> bool:
    """A frame of funcgrad's own code (by file: user code may run in a module namespace
    of funcgrad's, as its doctests do)."""
    # funcgrad/, and transforms/ and backends/ wherever they live (beside it in a source
    # checkout); both are loaded by the time a transformation ends.
    dirs = [os.path.dirname(__file__)]
    for name in ("funcgrad.transforms", "funcgrad.backends"):
        mod = sys.modules.get(name)
        if mod is not None and mod.__file__:
            dirs.append(os.path.dirname(mod.__file__))
    return frame.f_code.co_filename.startswith(tuple(d + os.sep for d in dirs))


def check_leaks(trace: Any, tracer_type: type[Any]) -> None:
    """Raise if a tracer (a ``tracer_type``) of the finished ``trace`` is referenced from
    outside the frames of the transformation that ran it (called as the trace ends, with
    the check on)."""
    gc.collect()
    tracers = [o for o in gc.get_referrers(trace)
               if isinstance(o, tracer_type) and o._trace is trace]
    if not tracers:
        return
    # What the engine itself still holds: its frames up to the user's call of the
    # transformation (the inputs and outputs it handles, its boxes), and the trace's own
    # state. A tracer that anything else refers to (a list, dict, cell or frame of the
    # user's) has leaked.
    held: set[int] = set()
    own: set[int] = {id(tracers)}
    frame = sys._getframe(1)
    while frame is not None and _engine_frame(frame):
        local = frame.f_locals
        own.update((id(frame), id(local)))
        _reach(local.values(), held)
        frame = frame.f_back  # type: ignore[assignment]
    del frame
    _reach(vars(trace).values() if hasattr(trace, "__dict__") else (), held)
    leaked = []
    for t in tracers:
        for r in gc.get_referrers(t):
            if id(r) in own or id(r) in held or (isinstance(r, tracer_type) and r._trace is trace):
                continue
            leaked.append(t)
            break
    del tracers
    if leaked:
        shown = ", ".join(f"{type(t).__name__}({t.aval.str_short()})" for t in leaked[:3])
        raise UnexpectedTracerError(
            f"Leaked trace {trace.describe()}: {len(leaked)} tracer(s) of it are still "
            f"referenced after it finished ({shown}). A value computed inside the "
            "transformed function escaped it (a global, or a list or closure kept "
            "outside); return it from the function instead.")
