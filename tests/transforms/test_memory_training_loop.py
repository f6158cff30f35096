"""Issue 12's memory check: with the cyclic garbage collector off, 50 steps of a training
loop (eager ``grad`` and ``jit``-compiled) keep the live-object count and the traced memory
flat, and the step's inputs and activations die with the step (weak references)."""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gc_checks import collect_ours, collector_off

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad import nn, tree_util
from funcgrad.transforms import staged_vjp

STEPS = 50
_refs: list[weakref.ref[Any]] = []


def _init() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {"l1": {"w": jnp.asarray(rng.standard_normal((8, 16)) * 0.3), "b": jnp.zeros(16)},
            "l2": {"w": jnp.asarray(rng.standard_normal((16, 3)) * 0.3), "b": jnp.zeros(3)}}


def _watch(h: Any) -> None:
    """A weak reference to the activation's buffer (under grad ``h`` is a tracer whose
    primal holds it; under jit's tracing there is no buffer yet)."""
    while hasattr(h, "primal"):
        h = h.primal
    buf = getattr(h, "_value", None)
    if isinstance(buf, np.ndarray):
        _refs.append(weakref.ref(buf))


def _loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    h = nn.relu(x @ params["l1"]["w"] + params["l1"]["b"])
    _watch(h)
    logits = h @ params["l2"]["w"] + params["l2"]["b"]
    return -jnp.mean(jnp.sum(nn.log_softmax(logits) * nn.one_hot(y, 3), axis=-1))


def _step(params: dict[str, Any], x: Any, y: Any) -> dict[str, Any]:
    grads = fg.grad(_loss)(params, x, y)
    return tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


_jitted_step = fg.jit(_step)
LOOPS: dict[str, Callable[..., Any]] = {"eager": _step, "jit": _jitted_step}


def _array_bytes() -> int:
    """Bytes of NumPy array data alive now (NumPy reports its buffers to tracemalloc in a
    domain of their own, apart from the interpreter's bookkeeping)."""
    snap = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.DomainFilter(inclusive=True, domain=np.lib.tracemalloc_domain)])
    return sum(stat.size for stat in snap.statistics("filename"))


def _batch(i: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(i)
    return jnp.asarray(rng.standard_normal((32, 8))), jnp.asarray(rng.integers(0, 3, 32))


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_fifty_steps_are_flat(name: str) -> None:
    step = LOOPS[name]
    params = _init()
    # Warm-up: compiling, caches (eager backward stages a rule after its signature's
    # STAGE_AFTER-th use).
    for i in range(staged_vjp.STAGE_AFTER + 2):
        params = step(params, *_batch(i))
    counts: list[int] = []
    buffers: list[int] = []
    tracemalloc.start()
    try:
        with collector_off():
            for i in range(STEPS):
                params = step(params, *_batch(i))
                _refs.clear()  # the test's own weak references are not the loop's
                counts.append(len(gc.get_objects()))
                if i in (9, STEPS - 1):
                    buffers.append(_array_bytes())
            ours, found = collect_ours()
    finally:
        tracemalloc.stop()
    _refs.clear()
    assert ours == 0, f"{ours} of funcgrad's objects in reference cycles after {STEPS} " \
        f"steps ({found})"
    # Flat after the first steps: no per-step growth of objects (a few of slack for values
    # interned once), and not one array buffer more (a batch is 2 kB, an activation 4 kB).
    assert counts[-1] - counts[9] <= 20, counts[::10]
    assert buffers[1] - buffers[0] <= 512, buffers
    assert np.isfinite(np.asarray(params["l2"]["w"])).all()


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_inputs_and_activations_die_with_the_step(name: str) -> None:
    step = LOOPS[name]
    params = _init()
    params = step(params, *_batch(0))
    with collector_off():
        _refs.clear()
        x, y = _batch(1)
        old = params["l1"]["w"]
        dead = [weakref.ref(x), weakref.ref(y), weakref.ref(old)]
        params = step(params, x, y)
        del x, y, old
        activations = list(_refs)
        _refs.clear()
        assert all(r() is None for r in dead)
        assert all(r() is None for r in activations)
    if name == "eager":
        assert activations, "the loss ran, so its activation was seen"
