"""Collectives over named vmap axes (lax.psum, pmean, pmax, pmin, axis_index): the same
numbers as JAX for programs drawn over sizes and values, under grad and with jit, cond and
loops inside the map."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.testing import jax_x64_mode


def programs(m: Any) -> dict[str, Any]:
    """The same programs written against ``m`` (funcgrad or jax)."""
    lax, jnp = m.lax, m.numpy

    def normalize(v):  # type: ignore[no-untyped-def]
        return v / lax.psum(v, "i")

    return {
        "psum": m.vmap(normalize, axis_name="i"),
        "pmean": m.vmap(lambda v: v - lax.pmean(v, "i"), axis_name="i"),
        "pmax_pmin": m.vmap(lambda v: lax.pmax(v, "i") - lax.pmin(v, "i") + v, axis_name="i"),
        "axis_index": m.vmap(lambda v: v * lax.axis_index("i"), axis_name="i"),
        "nested_both": m.vmap(m.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"),
                              axis_name="i", in_axes=1),
        "nested_outer": m.vmap(m.vmap(lambda v: v * lax.psum(v, "i"), axis_name="j"),
                               axis_name="i", in_axes=1),
        "jit_inside": m.vmap(m.jit(normalize), axis_name="i"),
        "cond_inside": m.vmap(lambda v: lax.cond(v > 0, lambda u: lax.psum(u, "i"),
                                                 lambda u: -u, v), axis_name="i"),
        "loop_inside": m.vmap(lambda v: lax.fori_loop(0, 2, lambda k, u: u * 0.5 + lax.pmean(
            u, "i"), v), axis_name="i"),
        "grad_outside": m.grad(lambda w, v: jnp.sum(m.vmap(
            lambda x: (x * w) / lax.psum(x * w + 1.0, "i"), axis_name="i")(v) ** 2)),
        "grad_inside": m.vmap(m.grad(lambda x: lax.psum(x ** 2, "i") * x), axis_name="i"),
    }


ARGS = {"grad_outside": 2}
SETTINGS = settings(max_examples=15, deadline=None)


def _args(name: str, v: np.ndarray) -> tuple[Any, ...]:
    if name.startswith("nested"):
        return (np.stack([v, v[::-1] * 2.0]),)
    if name == "grad_outside":
        return (1.3, v)
    return (v,)


@pytest.mark.parametrize("name", sorted(programs(fg)))
@SETTINGS
@given(v=st.lists(st.floats(0.25, 4.0), min_size=1, max_size=5).map(np.array))
def test_matches_jax(name: str, v: np.ndarray) -> None:
    jax = pytest.importorskip("jax")
    ours = np.asarray(programs(fg)[name](*_args(name, v)))
    with jax_x64_mode(jax, True):
        theirs = np.asarray(programs(jax)[name](*_args(name, v)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_closed_forms_without_jax() -> None:
    v = np.array([1.0, 2.0, 5.0])
    np.testing.assert_allclose(np.asarray(programs(fg)["psum"](v)), v / v.sum())
    np.testing.assert_array_equal(np.asarray(programs(fg)["axis_index"](v)), v * [0, 1, 2])
    np.testing.assert_allclose(np.asarray(programs(fg)["pmean"](v)), v - v.mean())


def test_unbound_axis_name_raises_as_jax() -> None:
    with pytest.raises(NameError, match="unbound axis name: i"):
        fg.lax.psum(fnp.ones(2), "i")
    with pytest.raises(NameError, match="unbound axis name: k"):
        fg.vmap(lambda v: fg.lax.psum(v, "k"), axis_name="i")(fnp.ones(2))
