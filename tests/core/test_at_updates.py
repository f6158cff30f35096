"""``x.at[idx]`` against a plain-loop reference of JAX's documented semantics.

Every update kind (set, add, subtract, multiply, divide, power, min, max, apply, and get)
under every mode (None, "promise_in_bounds", "clip", "drop", "fill") with drawn index
kinds: Python ints, slices, integer arrays (with repeated, negative and out-of-range
entries), boolean masks and multi-axis combinations (adjacent and non-adjacent advanced
indices, ints mixed with arrays, Ellipsis).

The reference (``_addressed`` + ``_ref``) is a Python loop over NumPy, written from JAX's
documentation rather than from funcgrad:

* ``x[idx]`` addresses elements in the C order of its result, whose layout follows NumPy
  (broadcast advanced axes in place of the first advanced index when they are adjacent,
  in front otherwise; an int is an advanced index as soon as an array is present);
* a negative index wraps once (``i + n``); what is still out of range is then clamped by
  "clip", and dropped by every other mode of an update;
* ``get`` clamps under None, "promise_in_bounds" and "clip"; "fill" and "drop" read
  ``fill_value`` (NaN for floats, the most negative signed integer, the largest unsigned);
* repeated indices apply once per occurrence in order (add, multiply, min, max, power,
  apply) and the last one wins for set.

Each case runs eagerly, under ``funcgrad.jit`` (indices traced or closed over), under
``funcgrad.vmap`` (against a loop over the batch, indices batched or not), through
``funcgrad.jvp`` / ``funcgrad.vjp`` against central finite differences in float64, and,
where jax is installed, against ``jax.numpy`` itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import NonDifferentiableError

SETTINGS = settings(max_examples=6, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.data_too_large])

UPDATES = ("set", "add", "subtract", "multiply", "divide", "power", "min", "max", "apply")
KINDS = (*UPDATES, "get")
MODES = (None, "promise_in_bounds", "clip", "drop", "fill")
# The kinds with an integer x too (divide and power of integers are float operations).
INT_KINDS = ("set", "add", "subtract", "multiply", "min", "max", "apply", "get")
# The kinds built on a scatter-multiply: their derivative with respect to the values is
# only defined (in JAX) for unique indices.
MUL_KINDS = ("multiply", "divide", "power")


def _func(t: Any) -> Any:
    """The function of ``.apply``: nonlinear for floats, and tame when repeated."""
    return t * t * 0.25 + 0.5 if t.dtype.kind == "f" else t * 2 - 1


# ------------------------------------------------------------------ reference


def _entries(shape: tuple[int, ...], idx: Any) -> list[Any]:
    """One entry per axis: masks split into their nonzero positions, Ellipsis expanded."""
    raw = list(idx) if isinstance(idx, tuple) else [idx]
    out: list[Any] = []
    for e in raw:
        if isinstance(e, np.ndarray) and e.dtype == np.bool_:
            out.extend(np.nonzero(e))
        else:
            out.append(e)
    used = sum(1 for e in out if e is not Ellipsis)
    full: list[Any] = []
    for e in out:
        if e is Ellipsis:
            full.extend([slice(None)] * (len(shape) - used))
        else:
            full.append(e)
    return full + [slice(None)] * (len(shape) - len(full))


def _addressed(shape: tuple[int, ...], idx: Any
               ) -> tuple[tuple[int, ...], list[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """The shape of ``x[idx]`` and, in C order, (position in ``x[idx]``, coordinates in
    ``x``) for each element it addresses; coordinates are wrapped once, not range-checked."""
    entries = _entries(shape, idx)
    has_array = any(isinstance(e, np.ndarray) for e in entries)
    adv = [ax for ax, e in enumerate(entries)
           if isinstance(e, np.ndarray) or (has_array and not isinstance(e, slice))]
    arrays = dict(zip(adv, np.broadcast_arrays(*(np.asarray(entries[a]) for a in adv))))
    bshape = arrays[adv[0]].shape if adv else ()
    adjacent = adv == list(range(adv[0], adv[0] + len(adv))) if adv else True
    # The result's axes: ("s", axis) for a slice, ("b", k) for a broadcast index axis.
    layout: list[tuple[str, int]] = [] if adjacent else [("b", k) for k in range(len(bshape))]
    for ax, e in enumerate(entries):
        if isinstance(e, slice):
            layout.append(("s", ax))
        elif adjacent and adv and ax == adv[0]:
            layout.extend(("b", k) for k in range(len(bshape)))
    ranges = {ax: list(range(*e.indices(shape[ax]))) for ax, e in enumerate(entries)
              if isinstance(e, slice)}
    rshape = tuple(len(ranges[i]) if t == "s" else bshape[i] for t, i in layout)
    out = []
    for r in np.ndindex(*rshape):
        b = tuple(r[p] for p, (t, _) in enumerate(layout) if t == "b")
        where = {i: r[p] for p, (t, i) in enumerate(layout) if t == "s"}
        coords = []
        for ax, e in enumerate(entries):
            if isinstance(e, slice):
                c = ranges[ax][where[ax]]
            elif ax in arrays:
                c = int(arrays[ax][b])
            else:
                c = int(e)
            coords.append(c + shape[ax] if c < 0 else c)
        out.append((r, tuple(coords)))
    return rshape, out


def _target(coords: tuple[int, ...], shape: tuple[int, ...], clamp: bool
            ) -> tuple[int, ...] | None:
    if clamp:
        return tuple(min(max(c, 0), n - 1) for c, n in zip(coords, shape))
    if all(0 <= c < n for c, n in zip(coords, shape)):
        return coords
    return None


def _default_fill(dtype: np.dtype[Any]) -> Any:
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def _ref(kind: str, mode: Any, x: np.ndarray, idx: Any, values: Any = None,
         fill_value: Any = None) -> np.ndarray:
    """What ``x.at[idx].<kind>(values, mode=mode)`` gives, one element at a time."""
    rshape, addressed = _addressed(x.shape, idx)
    if kind == "get":
        out = np.empty(rshape, x.dtype)
        fill = _default_fill(x.dtype) if fill_value is None else fill_value
        for r, coords in addressed:
            t = _target(coords, x.shape, clamp=mode not in ("fill", "drop"))
            out[r] = fill if t is None else x[t]
        return out
    out = np.array(x, copy=True)
    v = np.broadcast_to(np.asarray(values).astype(x.dtype), rshape)
    for r, coords in addressed:
        t = _target(coords, x.shape, clamp=mode == "clip")
        if t is None:
            continue
        old, val = out[t], v[r]
        out[t] = {
            "set": lambda: val, "add": lambda: old + val, "subtract": lambda: old - val,
            "multiply": lambda: old * val, "divide": lambda: old / val,
            "power": lambda: old ** val, "min": lambda: min(old, val),
            "max": lambda: max(old, val), "apply": lambda: _func(old),
        }[kind]()
    return out


def _unique(shape: tuple[int, ...], idx: Any, mode: Any) -> bool:
    """Whether no element is addressed twice (counting dropped indices too)."""
    _, addressed = _addressed(shape, idx)
    raw = [c for _, c in addressed]
    kept = [t for t in (_target(c, shape, mode == "clip") for c in raw) if t is not None]
    return len(set(raw)) == len(raw) and len(set(kept)) == len(kept)


# ------------------------------------------------------------------ the operation


def _at(kind: str, mode: Any, x: Any, idx: Any, values: Any = None, fill_value: Any = None,
        unique: bool = False) -> Any:
    """``x.at[idx].<kind>(...)`` for funcgrad and jax alike."""
    ref = x.at[idx]
    if kind == "get":
        return ref.get(mode=mode, fill_value=fill_value)
    if kind == "apply":
        return ref.apply(_func, mode=mode)
    kw: dict[str, Any] = {"mode": mode}
    if unique:
        kw["unique_indices"] = True
    return getattr(ref, kind)(values, **kw)


# ------------------------------------------------------------------ drawn cases


@dataclasses.dataclass(frozen=True)
class Case:
    """A shape and an index into it (ints, slices, NumPy int or bool arrays, Ellipsis)."""

    form: str
    shape: tuple[int, ...]
    idx: Any

    def __repr__(self) -> str:
        return f"Case({self.form!r}, {self.shape}, {self.idx!r})"


def _int(draw: Any, n: int) -> int:
    return draw(st.integers(-n - 3, n + 2))


def _slice(draw: Any, n: int) -> slice:
    bound = st.none() | st.integers(-n - 2, n + 2)
    return slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, -1, -2])))


def _int_array(draw: Any, n: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.array([draw(st.integers(-n - 3, n + 2)) for _ in range(int(np.prod(shape)))],
                    np.int64).reshape(shape)


def _mask(draw: Any, shape: tuple[int, ...]) -> np.ndarray:
    return np.array([draw(st.booleans()) for _ in range(int(np.prod(shape)))],
                    bool).reshape(shape)


FORMS = ("int", "slice", "array", "array2d", "mask", "int_int", "int_slice", "slice_int",
         "slice_slice", "array_array", "array_outer", "array_slice", "slice_array",
         "int_array", "array_int", "mask2d", "mask_rows", "ellipsis_array", "array_slice_array",
         "int_slice_array", "slice_array_array", "array_ellipsis")


@st.composite
def cases(draw: Any) -> Case:
    form = draw(st.sampled_from(FORMS))
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 4))
    k = draw(st.integers(0, 6))
    if form in ("int", "slice", "array", "array2d", "mask"):
        shape: tuple[int, ...] = (n,) if draw(st.booleans()) else (n, m)
        idx: Any = {
            "int": lambda: _int(draw, n), "slice": lambda: _slice(draw, n),
            "array": lambda: _int_array(draw, n, (k,)),
            "array2d": lambda: _int_array(draw, n, (2, 3)),
            "mask": lambda: _mask(draw, shape),
        }[form]()
    elif form in ("array_slice_array", "int_slice_array", "slice_array_array",
                  "array_ellipsis"):
        shape = (n, m, 3)
        idx = {
            "array_slice_array": lambda: (_int_array(draw, n, (k,)), slice(None),
                                          _int_array(draw, 3, (k,))),
            "int_slice_array": lambda: (_int(draw, n), _slice(draw, m),
                                        _int_array(draw, 3, (k,))),
            "slice_array_array": lambda: (_slice(draw, n), _int_array(draw, m, (2, 1)),
                                          _int_array(draw, 3, (k,))),
            "array_ellipsis": lambda: (_int_array(draw, n, (k,)), Ellipsis),
        }[form]()
    else:
        shape = (n, m)
        idx = {
            "int_int": lambda: (_int(draw, n), _int(draw, m)),
            "int_slice": lambda: (_int(draw, n), _slice(draw, m)),
            "slice_int": lambda: (_slice(draw, n), _int(draw, m)),
            "slice_slice": lambda: (_slice(draw, n), _slice(draw, m)),
            "array_array": lambda: (_int_array(draw, n, (k,)), _int_array(draw, m, (k,))),
            "array_outer": lambda: (_int_array(draw, n, (k, 1)), _int_array(draw, m, (2,))),
            "array_slice": lambda: (_int_array(draw, n, (k,)), _slice(draw, m)),
            "slice_array": lambda: (_slice(draw, n), _int_array(draw, m, (k,))),
            "int_array": lambda: (_int(draw, n), _int_array(draw, m, (k,))),
            "array_int": lambda: (_int_array(draw, n, (k,)), _int(draw, m)),
            "mask2d": lambda: _mask(draw, shape),
            "mask_rows": lambda: (_mask(draw, (n,)), _slice(draw, m)),
            "ellipsis_array": lambda: (Ellipsis, _int_array(draw, m, (k,))),
        }[form]()
    return Case(form, shape, idx)


# Fixed examples that always run: repeats, negative entries that wrap, entries out of range
# on both sides (-9 stays negative after one wrap), multi-axis and non-adjacent indices.
FIXED = [
    Case("array", (5,), np.array([0, 0, -1, 7, -9, 2, 2, 2], np.int64)),
    Case("array_array", (4, 3), (np.array([1, 1, -1, 5, 0], np.int64),
                                 np.array([2, 2, 0, 1, -7], np.int64))),
    Case("array_slice_array", (3, 2, 3), (np.array([0, 0, -4, 3], np.int64), slice(None),
                                          np.array([1, 1, 2, -1], np.int64))),
    Case("int", (4, 2), -5),
]


@st.composite
def values_for(draw: Any, case: Case, dtype: Any, rng: np.random.Generator) -> Any:
    """Update values broadcastable to ``x[idx]``: its full shape, a trailing part, 0-d, or
    a Python scalar."""
    rshape, _ = _addressed(case.shape, case.idx)
    form = draw(st.sampled_from(["full", "full", "trailing", "0d", "python"]))
    vshape = {"full": rshape, "trailing": rshape[-1:], "0d": ()}.get(form, ())
    v = _data(rng, vshape, dtype)
    return v.item() if form == "python" else v


def _data(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "i":
        return rng.integers(-4, 5, shape).astype(dt)
    # Away from 0 (divide) and positive (power); no ties (min, max, finite differences).
    return rng.uniform(0.5, 2.0, shape).astype(dt)


@@BODY@@

# ------------------------------------------------------------------ real jax


@contextlib.contextmanager
def _jax_x64() -> Iterator[Any]:
    jax = pytest.importorskip("jax")
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", prev)


