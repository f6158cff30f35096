"""Counting what reference counting alone leaves behind (the memory tests of both faces)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from funcgrad.transforms import staged_vjp


@contextmanager
def collector_off() -> Iterator[None]:
    """The cyclic garbage collector off inside the block (after one collection)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


_OUR_DIRS = ("/funcgrad/", "/transforms/", "/backends/")


def _ours(obj: Any) -> bool:
    """Whether ``obj`` is funcgrad's: an instance of one of its classes, or a function or
    frame of its code."""
    if (getattr(type(obj), "__module__", "") or "").startswith("funcgrad"):
        return True
    code = getattr(obj, "__code__", None) or getattr(obj, "f_code", None)
    return code is not None and any(d in code.co_filename for d in _OUR_DIRS)


def collect_ours() -> tuple[int, str]:
    """Collect, and say how many of the objects found in reference cycles are funcgrad's,
    with a summary of all of them by type: other libraries' threads (JAX's, PyTorch's) may
    leave cycles of their own while the collector is off."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    kinds: dict[str, int] = {}
    for o in found:
        name = f"{type(o).__module__}.{type(o).__qualname__}"
        kinds[name] = kinds.get(name, 0) + 1
    summary = ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    return sum(_ours(o) for o in found), f"{len(found)} objects: {summary}"


def cyclic_garbage(step: Callable[[], Any], steps: int = 10) -> int:
    """funcgrad's objects the collector finds after ``steps`` calls made with it off (after
    warm-up): what reference counting alone did not free."""
    for _ in range(2):
        step()
    with collector_off():
        for _ in range(steps):
            step()
        ours, _summary = collect_ours()
        # Cycles with none of funcgrad's objects in them are another library's (real
        # PyTorch's FakeTensor caches, JAX's threads, left by earlier tests): not counted.
        return ours


def object_growth(step: Callable[[], Any], steps: int = 20) -> int:
    """How many more objects the collector tracks after ``steps`` calls (after warm-up:
    caches fill, and eager backward stages a rule at its signature's STAGE_AFTER-th use)."""
    for _ in range(staged_vjp.STAGE_AFTER + 2):
        step()
    with collector_off():
        before = len(gc.get_objects())
        for _ in range(steps):
            step()
        return len(gc.get_objects()) - before
