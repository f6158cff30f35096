"""The checks a user turns on: ``checking_leaks`` (a tracer that escapes its
transformation raises as the transformation ends) and ``debug_nans``/``debug_infs``
(the error names the primitive and the user's line). ``check_rules`` has
tests/test_check_rules.py."""

from __future__ import annotations

import gc
import sys
from typing import Any

import numpy as np
import pytest
from fuzz_programs import build, case, hypothesis_programs, one_transform, transforms_for
from hypothesis import given, settings

import funcgrad as fg
import funcgrad.numpy as fnp


def here() -> int:
    """The caller's line number."""
    return sys._getframe(1).f_lineno


def _leakers(kept: list[Any]) -> dict[str, Any]:
    def keep(v: Any) -> Any:
        kept.append(v)
        return v * 2.0

    x = np.array([0.5, 1.5])
    return {
        "grad": lambda: fg.grad(lambda v: fnp.sum(keep(v)))(x),
        "jvp": lambda: fg.jvp(keep, (x,), (x,)),
        "vjp": lambda: fg.vjp(keep, x),
        "vmap": lambda: fg.vmap(keep)(x),
        "jit": lambda: fg.jit(keep)(x),
        "make_jaxpr": lambda: fg.make_jaxpr(keep)(x),
        "linearize": lambda: fg.linearize(keep, x),
        "nested": lambda: fg.grad(lambda v: fnp.sum(fg.jit(keep)(v)))(x),
    }


@pytest.mark.parametrize("name", sorted(_leakers([])))
def test_checking_leaks_raises_as_the_transformation_ends(name: str) -> None:
    kept: list[Any] = []
    with fg.checking_leaks(), pytest.raises(fg.errors.UnexpectedTracerError,
                                            match="Leaked trace"):
        _leakers(kept)[name]()
    # off: the same program runs; the leaked tracer raises only when used
    kept.clear()
    _leakers(kept)[name]()
    with pytest.raises(fg.errors.UnexpectedTracerError):
        fnp.sin(kept[0])


@pytest.mark.parametrize("name", ["vmap", "jit", "make_jaxpr"])
def test_jax_checking_leaks_raises_on_the_same_leak(name: str) -> None:
    # JAX 0.10 reports the leaks of these traces (not those of jvp/grad: sharp bits)
    jax = pytest.importorskip("jax")
    kept: list[Any] = []
    x = np.array([0.5, 1.5])
    run = {"vmap": lambda f: jax.vmap(f)(x), "jit": lambda f: jax.jit(f)(x),
           "make_jaxpr": lambda f: jax.make_jaxpr(f)(x)}[name]
    with jax.checking_leaks(), pytest.raises(Exception, match="Leaked trace"):
        run(lambda v: kept.append(v) or v * 2.0)


# The check collects garbage and scans the heap at every trace's end: in a long-lived test
# process (a big heap) that is seconds per program, so a few transforms of each program, and
# the objects older than the example are frozen out of the collector's scans (gc.freeze).
CHECKED_TRANSFORMS = ("eval", "jit", "vmap", "grad", "jvp", "vjp", "jit_grad")


@settings(max_examples=5, deadline=None)
@given(prog=hypothesis_programs(max_ops=3))
def test_checking_leaks_finds_nothing_in_programs_that_leak_nothing(prog: Any) -> None:
    # No false alarm: transforms of random programs run as they do unchecked.
    gc.collect()
    gc.freeze()
    try:
        _run_checked_and_unchecked(prog)
    finally:
        gc.unfreeze()


def _run_checked_and_unchecked(prog: Any) -> None:
    f = build(fg, prog)
    c = case(prog)
    for name in [t for t in transforms_for(prog) if t in CHECKED_TRANSFORMS]:
        try:
            want = one_transform(fg, f, name, c)
        except Exception as e:  # noqa: BLE001 - then the checked run must raise it too
            with fg.checking_leaks(), pytest.raises(type(e)):
                one_transform(fg, f, name, c)
            continue
        with fg.checking_leaks():
            got = one_transform(fg, f, name, c)
        for a, b in zip(fg.tree_util.tree_leaves(got), fg.tree_util.tree_leaves(want)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_debug_nans_and_infs_name_the_primitive_and_the_line() -> None:
    with fg.debug_nans(True):
        line = here(); f = lambda x: fnp.log(x) * 2.0  # noqa: E702, E731
        for run in (lambda: f(fnp.array([-1.0])), lambda: fg.jit(f)(fnp.array([-1.0])),
                    lambda: fg.grad(lambda x: fnp.sum(f(x)))(fnp.array([-1.0]))):
            with pytest.raises(FloatingPointError,
                               match=rf"nan\) encountered in log \(at .*:{line}\b"):
                run()
    with fg.debug_infs(True):
        line = here(); g = lambda x: 1.0 / x  # noqa: E702, E731
        with pytest.raises(FloatingPointError, match=rf"inf\) encountered in div \(at .*:{line}\b"):
            g(fnp.array([0.0]))
