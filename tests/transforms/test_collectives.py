"""Collectives over named vmap axes (lax.psum, pmean, pmax, pmin, axis_index, all_gather,
psum_scatter, ppermute, pshuffle, axis_size): the same numbers as JAX for programs drawn over
sizes and values, under grad and with jit, cond and loops inside the map; their derivatives
against finite differences; pmap in one process."""

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
        "all_gather": m.vmap(lambda v: lax.all_gather(v, "i") * v, axis_name="i"),
        "all_gather_tiled": m.vmap(lambda v: lax.all_gather(jnp.stack([v, 2 * v]), "i",
                                                            tiled=True), axis_name="i"),
        "all_gather_axis1": m.vmap(lambda v: lax.all_gather(jnp.stack([v, -v]), "i", axis=1),
                                   axis_name="i"),
        "psum_scatter": m.vmap(lambda v: lax.psum_scatter(lax.all_gather(v, "i") * v, "i"),
                               axis_name="i"),
        "psum_scatter_tiled": m.vmap(lambda v: lax.psum_scatter(
            jnp.concatenate([lax.all_gather(v, "i")] * 2) * v, "i", tiled=True),
            axis_name="i"),
        "ppermute_ring": m.vmap(lambda v: lax.ppermute(v, "i", [
            (k, (k + 1) % lax.axis_size("i")) for k in range(lax.axis_size("i"))]) + v,
            axis_name="i"),
        "pshuffle": m.vmap(lambda v: lax.pshuffle(v, "i", list(range(lax.axis_size("i")))[
            ::-1]), axis_name="i"),
        "grad_all_gather": m.grad(lambda v: jnp.sum(m.vmap(
            lambda x: jnp.sin(lax.all_gather(x, "i")) * x, axis_name="i")(v) ** 2)),
        "grad_psum_scatter": m.grad(lambda v: jnp.sum(m.vmap(
            lambda x: lax.psum_scatter(lax.all_gather(x, "i") * x, "i"),
            axis_name="i")(v) ** 3)),
        "grad_ppermute": m.grad(lambda v: jnp.sum(jnp.cos(m.vmap(
            lambda x: lax.ppermute(x * x, "i", [(k, lax.axis_size("i") - 1 - k) for k in
                                                range(lax.axis_size("i"))]),
            axis_name="i")(v)) * jnp.arange(v.shape[0]))),
        "jit_all_gather": m.jit(m.vmap(lambda v: lax.all_gather(v, "i").sum() * v,
                                       axis_name="i")),
        "all_to_all": m.vmap(lambda v: lax.all_to_all(lax.all_gather(v, "i") * v, "i", 0, 0),
                             axis_name="i"),
        "all_to_all_tiled": m.vmap(lambda v: lax.all_to_all(
            jnp.stack([lax.all_gather(v, "i") * v, lax.all_gather(v, "i") + v]), "i", 1, 0,
            tiled=True), axis_name="i"),
        "grad_all_to_all": m.grad(lambda v: jnp.sum(jnp.sin(m.vmap(
            lambda x: lax.all_to_all(lax.all_gather(x, "i") * x, "i", 0, 0),
            axis_name="i")(v)) * jnp.arange(v.shape[0]))),
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


def test_ppermute_gives_zeros_to_members_that_receive_nothing() -> None:
    # JAX's vmap rule takes whole permutations only; pmap (and funcgrad's vmap) take any.
    out = fg.vmap(lambda x: fg.lax.ppermute(x * 3.0, "i", [(0, 2), (2, 1)]), axis_name="i")(
        np.array([1.0, 2.0, 4.0]))
    np.testing.assert_array_equal(np.asarray(out), [0.0, 12.0, 3.0])


def test_collective_derivatives_against_finite_differences() -> None:
    from funcgrad.testing import check_grads

    lax = fg.lax
    v = np.array([0.3, -1.2, 0.8, 1.7])
    fns = [
        fg.vmap(lambda x: lax.all_gather(x, "i") * x, axis_name="i"),
        fg.vmap(lambda x: lax.psum_scatter(lax.all_gather(x, "i") * x, "i"), axis_name="i"),
        fg.vmap(lambda x: lax.ppermute(x ** 2, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="i"),
        fg.vmap(lambda x: lax.psum(x, "i", axis_index_groups=[[0, 1], [2, 3]]) * x,
                axis_name="i"),
        fg.vmap(lambda x: lax.pmax(x, "i") * x, axis_name="i"),
        fg.vmap(lambda x: lax.all_to_all(lax.all_gather(x, "i") * x, "i", 0, 0),
                axis_name="i"),
    ]
    for f in fns:
        check_grads(f, (v,), order=2)


def test_axis_index_groups_reduce_within_groups() -> None:
    lax = fg.lax
    v = np.array([1.0, 5.0, 3.0, 2.0])
    groups = [[0, 2], [1, 3]]
    for fn, ref in ((lax.psum, [4.0, 7.0, 4.0, 7.0]), (lax.pmax, [3.0, 5.0, 3.0, 5.0]),
                    (lax.pmin, [1.0, 2.0, 1.0, 2.0]), (lax.pmean, [2.0, 3.5, 2.0, 3.5])):
        out = fg.vmap(lambda x, fn=fn: fn(x, "i", axis_index_groups=groups), axis_name="i")(v)
        np.testing.assert_allclose(np.asarray(out), ref)
    with pytest.raises(ValueError, match="exactly once"):
        fg.vmap(lambda x: lax.psum(x, "i", axis_index_groups=[[0, 1]]), axis_name="i")(v)
    with pytest.raises(ValueError, match="same size"):
        fg.vmap(lambda x: lax.psum(x, "i", axis_index_groups=[[0], [1, 2, 3]]),
                axis_name="i")(v)


def test_collective_argument_errors() -> None:
    lax = fg.lax
    v = np.ones(3)
    with pytest.raises(ValueError, match="unique"):
        fg.vmap(lambda x: lax.ppermute(x, "i", [(0, 1), (2, 1)]), axis_name="i")(v)
    with pytest.raises(ValueError, match="outside the axis"):
        fg.vmap(lambda x: lax.ppermute(x, "i", [(0, 5)]), axis_name="i")(v)
    with pytest.raises(fg.errors.ShapeError, match="members"):
        fg.vmap(lambda x: lax.psum_scatter(fnp.ones(2) * x, "i"), axis_name="i")(v)
    with pytest.raises(NameError, match="unbound axis name: j"):
        fg.vmap(lambda x: lax.all_gather(x, "j"), axis_name="i")(v)


def test_pmap_in_one_process_maps_one_member() -> None:
    x = fnp.arange(3.0)[None]
    out = fg.pmap(lambda v: fg.lax.psum(v, "i") * 2 + fg.lax.axis_index("i"), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(out), [[0.0, 2.0, 4.0]])
    g = fg.pmap(fg.grad(lambda v: fg.lax.pmean(fnp.sum(v ** 2), "i")), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(g), [[0.0, 2.0, 4.0]])
    both = fg.pmap(lambda a, b: a * b, axis_name="i", in_axes=(0, None))(x, 3.0)
    np.testing.assert_array_equal(np.asarray(both), [[0.0, 3.0, 6.0]])
    with pytest.raises(ValueError, match="1 device"):
        fg.pmap(lambda v: v, axis_name="i")(fnp.ones((2, 3)))


def test_unbound_axis_name_raises_as_jax() -> None:
    with pytest.raises(NameError, match="unbound axis name: i"):
        fg.lax.psum(fnp.ones(2), "i")
    with pytest.raises(NameError, match="unbound axis name: k"):
        fg.vmap(lambda v: fg.lax.psum(v, "k"), axis_name="i")(fnp.ones(2))
