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


def cyclic_garbage(step: Callable[[], Any], steps: int = 10) -> int:
    """Objects the collector finds after ``steps`` calls made with it off (after warm-up):
    what reference counting alone did not free."""
    for _ in range(2):
        step()
    with collector_off():
        for _ in range(steps):
            step()
        return gc.collect()


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
