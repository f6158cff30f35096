"""JAX-face fixes compared with JAX 0.10.2 (twenty-third side-by-side review):
``Array.committed``, Python ints out of a dtype's range in ``jnp.array``/``full``/
``lax.full``/``full_like`` and the scalar types, ``jnp.repeat`` with per-element counts
(under jit, negative counts, a traced count without ``total_repeat_length``), ``kind=`` and
``order=`` of ``sort``/``argsort``, ``searchsorted``'s binary search on unsorted input,
``dir()`` of ``tree_util`` and ``scipy.special``, and placement attributes of tracers."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32


def _outcome(call: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = call()
        except Exception as e:  # noqa: BLE001 - compared between the two libraries
            msg = re.sub(r"object id \d+", "object id N", str(e))
            return ("raised", type(e).__name__, msg)
    if isinstance(out, (bool, list, tuple)):
        return ("ok", repr(out))
    arr = np.asarray(out)
    return ("ok", arr.dtype.name, arr.shape, arr.tolist())


def _same(make: Callable[[Any, Any], Callable[[], Any]]) -> None:
    assert _outcome(make(fg, fnp)) == _outcome(make(jax, jnp))


# ------------------------------------------------------------------ committed

COMMITTED = {
    "ones": lambda j, n: lambda: n.ones(3).committed,
    "asarray": lambda j, n: lambda: n.asarray(np.ones(3)).committed,
    "device_put": lambda j, n: lambda: j.device_put(n.ones(3)).committed,
    "device_put_device": lambda j, n: lambda: j.device_put(n.ones(3), j.devices()[0]).committed,
    "device_put_sharding": lambda j, n: lambda: j.device_put(
        n.ones(3), j.sharding.SingleDeviceSharding(j.devices()[0])).committed,
    "op_on_committed": lambda j, n: lambda: (
        j.device_put(n.ones(3), j.devices()[0]) + 1).committed,
    "op_on_uncommitted": lambda j, n: lambda: (n.ones(3) * 2).committed,
    "key": lambda j, n: lambda: j.random.key(0).committed,
    "key_device_put": lambda j, n: lambda: j.device_put(j.random.key(0),
                                                        j.devices()[0]).committed,
    "traced": lambda j, n: lambda: j.jit(lambda x: x.committed)(1.0),
    "grad": lambda j, n: lambda: j.grad(lambda x: (x.committed, x)[1])(1.0),
    "set": lambda j, n: lambda: setattr(n.ones(3), "committed", True),
    "traced_addressable_shards": lambda j, n: lambda: j.jit(
        lambda x: x.addressable_shards)(1.0),
    "traced_is_fully_addressable": lambda j, n: lambda: j.jit(
        lambda x: x.is_fully_addressable)(1.0),
    "traced_sharding": lambda j, n: lambda: j.jit(lambda x: x.sharding)(1.0),
}


@pytest.mark.parametrize("case", sorted(COMMITTED))
def test_committed(case: str) -> None:
    _same(COMMITTED[case])


# ------------------------------------------------------------------- overflow

BIG = [300, -1, 2**40, 2**63, 2**64, -2**63 - 1]
DTYPES = ["int8", "uint32", "int64", "float32", "bfloat16", "bool_"]


@pytest.mark.parametrize("value", BIG)
@pytest.mark.parametrize("dtype", DTYPES)
def test_python_int_to_dtype(value: int, dtype: str) -> None:
    _same(lambda j, n: lambda: getattr(n, dtype)(value))
    _same(lambda j, n: lambda: n.array(value, getattr(n, dtype)))
    _same(lambda j, n: lambda: n.full(2, value, getattr(n, dtype)))
    _same(lambda j, n: lambda: j.lax.full((2,), value, getattr(n, dtype)))
    _same(lambda j, n: lambda: n.full_like(n.zeros(2, getattr(n, dtype)), value))


@pytest.mark.parametrize("value", BIG)
def test_python_int_without_dtype(value: int) -> None:
    _same(lambda j, n: lambda: n.array([value, 1.0]))
    _same(lambda j, n: lambda: n.array([value]))
    _same(lambda j, n: lambda: n.asarray([value, True]))
    _same(lambda j, n: lambda: n.array([value], n.uint32))
    _same(lambda j, n: lambda: n.array([value], n.float32))
    _same(lambda j, n: lambda: n.full(2, value))
    _same(lambda j, n: lambda: j.lax.full((2,), value))
    _same(lambda j, n: lambda: n.full_like(n.ones(2), value))
    _same(lambda j, n: lambda: n.full_like(n.asarray(1), value))


# --------------------------------------------------------------------- repeat

def _closed_over(j: Any, n: Any, total: int | None) -> Callable[[], Any]:
    counts = n.array([1, 2, 3])  # made outside: a constant of the jitted function
    return lambda: j.jit(lambda x: n.repeat(x, counts, total_repeat_length=total))(
        n.arange(3.0))


REPEAT = {
    "closed_over": lambda j, n: _closed_over(j, n, None),
    "closed_over_total": lambda j, n: _closed_over(j, n, 5),
    "total_short": lambda j, n: lambda: j.jit(
        lambda x, r: n.repeat(x, r, total_repeat_length=4))(n.arange(3.0), n.array([1, 2, 3])),
    "total_long": lambda j, n: lambda: j.jit(
        lambda x, r: n.repeat(x, r, total_repeat_length=8))(n.arange(3.0), n.array([1, 2, 3])),
    "traced_no_total": lambda j, n: lambda: j.jit(
        lambda x, r: n.repeat(x, r))(n.arange(3.0), n.array([1, 2, 3])),
    "traced_scalar_no_total": lambda j, n: lambda: j.jit(
        lambda x, r: n.repeat(x, r))(n.arange(3.0), 2),
    "wrong_length": lambda j, n: lambda: n.repeat(n.arange(3.0), n.array([1, 2])),
    "negative_to_empty": lambda j, n: lambda: n.repeat(n.arange(3.0), n.array([1, -2, 1])),
    "negative_start": lambda j, n: lambda: n.repeat(n.arange(3.0), n.array([1, -3, 5])),
    "negative_mid": lambda j, n: lambda: n.repeat(n.arange(3.0), n.array([3, -2, 2])),
    "zeros_axis0": lambda j, n: lambda: n.repeat(n.ones((3, 2)), n.array([0, 0, 0]), axis=0),
    "grad_counts": lambda j, n: lambda: j.grad(
        lambda x: n.repeat(x, n.array([1, 2, 3])).sum())(n.arange(3.0)),
}


@pytest.mark.parametrize("case", sorted(REPEAT))
def test_repeat_counts(case: str) -> None:
    _same(REPEAT[case])


# ---------------------------------------------------------------------- sorts


@pytest.mark.parametrize("fn", ["sort", "argsort"])
@pytest.mark.parametrize("kw", [{"kind": "stable"}, {"kind": "quicksort"}, {"kind": None},
                                {"order": "a"}, {"order": None}])
def test_sort_kind_and_order(fn: str, kw: dict[str, Any]) -> None:
    _same(lambda j, n: lambda: getattr(n, fn)(n.array([3.0, 1.0, 2.0]), **kw))
    _same(lambda j, n: lambda: getattr(n.array([3.0, 1.0, 2.0]), fn)(**kw))


def test_numpy_argsort_of_an_array() -> None:
    _same(lambda j, n: lambda: np.argsort(n.array([3.0, 1.0, 2.0])))


# --------------------------------------------------------------- searchsorted

_values = st.one_of(st.integers(-3, 3).map(float), st.just(float("nan")))


# (Fixed lengths: JAX compiles each method once per shape.)
@settings(max_examples=25, deadline=None)
@given(a=st.lists(_values, min_size=6, max_size=6), v=st.lists(_values, min_size=4, max_size=4),
       ints=st.booleans())
def test_searchsorted_methods_on_any_input(a: list[float], v: list[float],
                                           ints: bool) -> None:
    if ints:
        a = [0 if np.isnan(x) else int(x) for x in a]
        v = [0 if np.isnan(x) else int(x) for x in v]
    for method in ("scan", "scan_unrolled", "sort", "compare_all"):
        for side in ("left", "right"):
            want = np.asarray(jnp.searchsorted(jnp.array(a), jnp.array(v), side=side,
                                               method=method))
            got = np.asarray(fnp.searchsorted(fnp.array(a), fnp.array(v), side=side,
                                              method=method))
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"{method} {side}")


def test_searchsorted_scan_under_jit_and_bad_method() -> None:
    a, v = [3.0, 1.0, 2.0, 5.0, 4.0], [0.0, 1.0, 2.5, 6.0]
    _same(lambda j, n: lambda: j.jit(lambda a, v: n.searchsorted(a, v))(n.array(a), n.array(v)))
    _same(lambda j, n: lambda: n.searchsorted(n.array(a), 1.0, method="foo"))
    _same(lambda j, n: lambda: n.searchsorted(n.array(a), 1.0, side="foo"))


# ------------------------------------------------------------------------ dir


@pytest.mark.parametrize("module", ["tree_util", "scipy.special"])
def test_dir_lists_the_public_names(module: str) -> None:
    import importlib  # noqa: PLC0415

    ours = importlib.import_module(f"funcgrad.{module}")
    theirs = importlib.import_module(f"jax.{module}")
    public = sorted(n for n in dir(ours) if not n.startswith("_"))
    assert public == sorted(n for n in dir(theirs) if not n.startswith("_"))
    assert all(hasattr(ours, n) for n in public)


# ------------------------------------------------------------- unique, size=


@pytest.mark.parametrize("size", [2, 5])
@pytest.mark.parametrize("axis", [0, 1])
def test_unique_along_an_axis_with_size_under_jit(size: int, axis: int) -> None:
    x = np.array([[3, 1], [3, 0], [2, 1], [3, 0], [2, 1]], np.int32)
    f = np.array([[1.0, np.nan], [1.0, np.nan], [0.0, 2.0]], np.float32)
    _same(lambda j, n: lambda: j.jit(lambda x: n.unique(
        x, axis=axis, size=size, return_index=True, return_inverse=True,
        return_counts=True))(x))
    _same(lambda j, n: lambda: j.jit(lambda x: n.unique(x, axis=axis, size=size,
                                                          fill_value=-7))(x))
    for eq in (True, False):
        _same(lambda j, n, eq=eq: lambda: j.jit(lambda x: n.unique(
            x, axis=0, size=size, equal_nan=eq, return_counts=True))(f))


def test_unique_size_must_be_an_index() -> None:
    _same(lambda j, n: lambda: n.unique(n.array([1, 2]), size=2.0))
