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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import NonDifferentiableError
from funcgrad.testing import jax_x64_mode

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
        out[t] = _OPS[kind](out[t], v[r])
    return out


_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "set": lambda old, val: val, "add": lambda old, val: old + val,
    "subtract": lambda old, val: old - val, "multiply": lambda old, val: old * val,
    "divide": lambda old, val: old / val, "power": lambda old, val: old ** val,
    "min": lambda old, val: min(old, val), "max": lambda old, val: max(old, val),
    "apply": lambda old, val: _func(old),
}


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


@st.composite
def problems(draw: Any, kind: str, dtypes: tuple[Any, ...] = ("float64",)) -> dict[str, Any]:
    """A case, x, values and fill_value for ``kind`` (and a seed for what else is random)."""
    case = draw(cases())
    dtype = np.dtype(draw(st.sampled_from(dtypes if kind in INT_KINDS else ("float64",))))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = _data(rng, case.shape, dtype)
    values = draw(values_for(case, dtype, rng)) if kind in UPDATES else None
    fill = None if dtype.kind != "f" or draw(st.booleans()) else -1.5
    return {"case": case, "x": x, "values": values, "fill": fill, "seed": int(rng.integers(
        2**31))}


def _fixed_problem(case: Case, dtype: Any = "float64") -> dict[str, Any]:
    rng = np.random.default_rng(0)
    rshape, _ = _addressed(case.shape, case.idx)
    return {"case": case, "x": _data(rng, case.shape, dtype),
            "values": _data(rng, rshape, dtype), "fill": None, "seed": 1}


def _check(got: Any, want: np.ndarray, what: str) -> None:
    got_np = np.asarray(got)
    assert got_np.shape == want.shape, f"{what}: shape {got_np.shape} != {want.shape}"
    assert got_np.dtype == want.dtype, f"{what}: dtype {got_np.dtype} != {want.dtype}"
    tol = 1e-5 if want.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got_np, want, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def _values_arg(kind: str, p: dict[str, Any]) -> Any:
    return p["values"] if kind in UPDATES else None


def _map_arrays(idx: Any, f: Callable[[Any], Any]) -> Any:
    if isinstance(idx, tuple):
        return tuple(f(e) if isinstance(e, np.ndarray) else e for e in idx)
    return f(idx) if isinstance(idx, np.ndarray) else idx


def _split(idx: Any, traced_ints: bool) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """The index's integer arrays (and ints, when ``traced_ints``) as a list of operands,
    and how to rebuild the index from them. Boolean masks stay static."""
    entries = list(idx) if isinstance(idx, tuple) else [idx]
    leaves: list[Any] = []
    slots: list[Any] = []
    for e in entries:
        dynamic = (isinstance(e, np.ndarray) and e.dtype != np.bool_) or (
            traced_ints and isinstance(e, int))
        if dynamic:
            slots.append(len(leaves))
            leaves.append(np.asarray(e, np.int64))
        else:
            slots.append(("static", e))

    def rebuild(ls: list[Any]) -> Any:
        out = tuple(s[1] if isinstance(s, tuple) else ls[s] for s in slots)
        return out if isinstance(idx, tuple) else out[0]

    return leaves, rebuild


# ------------------------------------------------------------------ the runs


def _run_eager(kind: str, mode: Any, p: dict[str, Any], as_arrays: bool) -> None:
    case, x = p["case"], p["x"]
    idx = _map_arrays(case.idx, fnp.asarray) if as_arrays else case.idx
    want = _ref(kind, mode, x, case.idx, p["values"], p["fill"])
    got = _at(kind, mode, fnp.asarray(x), idx, _values_arg(kind, p), p["fill"])
    assert isinstance(got, fg.Array)
    _check(got, want, f"eager {kind} mode={mode} {case} indices as Arrays={as_arrays}")


def _run_jit(kind: str, mode: Any, p: dict[str, Any], traced: bool) -> None:
    """Under jit, with the index arrays (and ints) as traced arguments or closed over."""
    case, x, fill = p["case"], p["x"], p["fill"]
    want = _ref(kind, mode, x, case.idx, p["values"], fill)
    values = _values_arg(kind, p)
    if traced:
        leaves, rebuild = _split(case.idx, traced_ints=True)
        f = fg.jit(lambda x, v, *ls: _at(kind, mode, x, rebuild(list(ls)), v, fill))
        got = f(fnp.asarray(x), values, *leaves)
    else:
        g = fg.jit(lambda x, v: _at(kind, mode, x, case.idx, v, fill))
        got = g(fnp.asarray(x), values)
    _check(got, want, f"jit {kind} mode={mode} traced indices={traced} {case}")


BATCH = 3


def _run_vmap(kind: str, mode: Any, p: dict[str, Any], batch_idx: Callable[[int], bool],
              batch_v: bool) -> None:
    """vmap over x (and the values and index arrays where ``batch_*`` says) against a loop
    over the batch; batched index arrays differ from member to member."""
    case, x0, v, fill = p["case"], p["x"], p["values"], p["fill"]
    rng = np.random.default_rng(p["seed"])
    xs = np.stack([x0] + [_data(rng, x0.shape, x0.dtype) for _ in range(BATCH - 1)])
    leaves, rebuild = _split(case.idx, traced_ints=False)
    batched = [batch_idx(i) for i in range(len(leaves))]
    n = max(case.shape)
    leaf_args = [np.stack([leaf] + [rng.integers(-n - 3, n + 3, leaf.shape)
                                    for _ in range(BATCH - 1)]) if b else leaf
                 for leaf, b in zip(leaves, batched)]
    batch_v = batch_v and kind in UPDATES and isinstance(v, np.ndarray)
    vs = np.stack([v] + [_data(rng, v.shape, v.dtype) for _ in range(BATCH - 1)]) \
        if batch_v else _values_arg(kind, p)

    def f(x: Any, v: Any, *ls: Any) -> Any:
        return _at(kind, mode, x, rebuild(list(ls)), v, fill)

    in_axes = (0, 0 if batch_v else None, *(0 if b else None for b in batched))
    got = fg.vmap(f, in_axes=in_axes)(fnp.asarray(xs), vs, *leaf_args)
    want = np.stack([
        _ref(kind, mode, xs[k], rebuild([a[k] if b else a for a, b in zip(leaf_args, batched)]),
             vs[k] if batch_v else vs, fill)
        for k in range(BATCH)])
    _check(got, want, f"vmap {kind} mode={mode} {case} batched indices={batched} "
                      f"batched values={batch_v}")


EPS = 1e-6


def _fd(fun: Callable[..., np.ndarray], args: list[np.ndarray], tangents: list[np.ndarray]
        ) -> np.ndarray:
    plus = fun(*(a + EPS * t for a, t in zip(args, tangents)))
    minus = fun(*(a - EPS * t for a, t in zip(args, tangents)))
    return (plus - minus) / (2 * EPS)


def _run_derivatives(kind: str, mode: Any, p: dict[str, Any], how: str, wrt: str) -> None:
    """``how`` ("jvp" or "vjp") with respect to ``wrt`` ("x", or "xv": x and the values),
    in float64, against central finite differences of the reference."""
    case, x, v, fill = p["case"], p["x"], p["values"], p["fill"]
    assert x.dtype == np.float64
    rng = np.random.default_rng(p["seed"])
    tx = rng.standard_normal(x.shape)
    if wrt == "x":

        def ref_x(x: np.ndarray) -> np.ndarray:
            return _ref(kind, mode, x, case.idx, v, fill)

        def fg_x(x: Any) -> Any:
            return _at(kind, mode, x, case.idx, v, fill)

        _check_derivative(how, fg_x, ref_x, [x], [tx], f"{how} {kind} mode={mode} wrt x "
                                                       f"{case}")
        return
    if kind not in UPDATES or kind == "apply" or not isinstance(v, np.ndarray):
        return
    unique = _unique(case.shape, case.idx, mode)
    tv = rng.standard_normal(v.shape)

    def ref_xv(x: np.ndarray, v: np.ndarray) -> np.ndarray:
        return _ref(kind, mode, x, case.idx, v, fill)

    def fg_xv(x: Any, v: Any) -> Any:
        return _at(kind, mode, x, case.idx, v, fill, unique=unique and kind in MUL_KINDS)

    what = f"{how} {kind} mode={mode} wrt x and values {case} unique={unique}"
    if kind in MUL_KINDS and not unique:
        # As in JAX: a scatter-multiply with repeated indices has no derivative with respect
        # to its multipliers. multiply must say so; divide and power (built on it in JAX)
        # may say so too, or else must be right.
        with _raises_or(may_pass=kind != "multiply"):
            _check_derivative(how, fg_xv, ref_xv, [x, v], [tx, tv], what)
        return
    _check_derivative(how, fg_xv, ref_xv, [x, v], [tx, tv], what)


@contextlib.contextmanager
def _raises_or(may_pass: bool) -> Iterator[None]:
    """NonDifferentiableError is expected; when ``may_pass``, no error is fine too."""
    if may_pass:
        with contextlib.suppress(NonDifferentiableError):
            yield
        return
    with pytest.raises(NonDifferentiableError, match="unique"):
        yield


def _check_derivative(how: str, fg_fun: Callable[..., Any],
                      ref_fun: Callable[..., np.ndarray], args: list[np.ndarray],
                      tangents: list[np.ndarray], what: str) -> None:
    want = ref_fun(*args)
    fd = _fd(ref_fun, args, tangents)
    # Elements read from fill_value (NaN by default) do not depend on the inputs.
    fd = np.where(np.isnan(want), 0.0, fd)
    scale = max(1.0, float(np.max(np.abs(np.nan_to_num(want)), initial=0.0)))
    if how == "jvp":
        out, tangent = fg.jvp(fg_fun, tuple(fnp.asarray(a) for a in args),
                              tuple(fnp.asarray(t) for t in tangents))
        _check(out, want, f"primal {what}")
        np.testing.assert_allclose(np.asarray(tangent), fd, rtol=1e-5, atol=1e-6 * scale,
                                   err_msg=what)
        return
    out, pullback = fg.vjp(fg_fun, *(fnp.asarray(a) for a in args))
    _check(out, want, f"primal {what}")
    ct = np.random.default_rng(7).standard_normal(want.shape)
    grads = pullback(fnp.asarray(ct))
    assert len(grads) == len(args)
    for g, a in zip(grads, args):
        assert np.asarray(g).shape == a.shape and np.asarray(g).dtype == a.dtype, what
    # <ct, J t> both ways: the pullback is the transpose of the finite-difference J t.
    lhs = sum(float(np.vdot(np.asarray(g), t)) for g, t in zip(grads, tangents))
    rhs = float(np.vdot(ct, fd))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-5, atol=1e-6 * scale * max(1, ct.size),
                               err_msg=f"<ct, J t> {what}")


@contextlib.contextmanager
def _jax_x64() -> Iterator[Any]:
    """jax.numpy in 64-bit mode (as this suite runs), the previous mode restored after."""
    jax = pytest.importorskip("jax")
    with jax_x64_mode(jax, True):
        import jax.numpy as jjnp

        yield jjnp


def _run_jax(kind: str, mode: Any, p: dict[str, Any]) -> None:
    """jax.numpy gives what the reference says, and funcgrad what jax.numpy gives."""
    case, x, fill = p["case"], p["x"], p["fill"]
    v = _values_arg(kind, p)
    with _jax_x64() as jjnp:
        want = _at(kind, mode, jjnp.asarray(x), case.idx, v, fill)
        want_np = np.asarray(want)
        want_weak = bool(want.weak_type)
    _check(want_np, _ref(kind, mode, x, case.idx, p["values"], fill),
           f"jax vs the reference: {kind} mode={mode} {case}")
    got = _at(kind, mode, fnp.asarray(x), case.idx, v, fill)
    _check(got, want_np, f"funcgrad vs jax: {kind} mode={mode} {case}")
    assert got.weak_type == want_weak


def _params(kinds: tuple[str, ...] = KINDS) -> list[Any]:
    """(kind, mode) parameters."""
    return [pytest.param(k, m, id=f"{k}-{m}") for k in kinds for m in MODES]


# ------------------------------------------------------------------ the tests
#
# Each test runs the FIXED cases first (so that every kind and mode always meets repeated,
# negative and out-of-range entries), then the drawn ones.


def _fixed_then_drawn(kind: str, dtypes: tuple[str, ...],
                      run: Callable[[dict[str, Any], Callable[[Any, str], Any]], None]
                      ) -> None:
    """``run(problem, choose)`` on the FIXED cases (each dtype, ``choose`` giving False then
    True), then on drawn problems (``choose`` drawing)."""
    for case in FIXED:
        for dtype in dtypes if kind in INT_KINDS else dtypes[:1]:
            for flag in (False, True):
                run(_fixed_problem(case, dtype), lambda s, label, f=flag: f)

    @given(data=st.data())
    @SETTINGS
    def drawn(data: Any) -> None:
        p = data.draw(problems(kind, dtypes), label="problem")
        run(p, lambda s, label: data.draw(s, label=label))

    drawn()


@pytest.mark.parametrize("kind,mode", _params())
def test_eager_matches_reference(kind: str, mode: Any) -> None:
    _fixed_then_drawn(kind, ("float64", "float32", "int32"), lambda p, choose: _run_eager(
        kind, mode, p, as_arrays=choose(st.booleans(), "indices as Arrays")))


@pytest.mark.parametrize("kind,mode", _params())
def test_jit_matches_reference(kind: str, mode: Any) -> None:
    _fixed_then_drawn(kind, ("float64", "int32"), lambda p, choose: _run_jit(
        kind, mode, p, traced=choose(st.booleans(), "indices traced")))


@pytest.mark.parametrize("kind,mode", _params())
def test_vmap_matches_loop(kind: str, mode: Any) -> None:
    def run(p: dict[str, Any], choose: Callable[[Any, str], Any]) -> None:
        flags = [choose(st.booleans(), f"index {i} batched") for i in range(3)]
        _run_vmap(kind, mode, p, batch_idx=lambda i: flags[i],
                  batch_v=choose(st.booleans(), "values batched"))

    _fixed_then_drawn(kind, ("float64", "int32"), run)


@pytest.mark.parametrize("kind,mode", _params())
def test_jvp_matches_finite_differences(kind: str, mode: Any) -> None:
    def run(p: dict[str, Any], choose: Callable[[Any, str], Any]) -> None:
        _run_derivatives(kind, mode, p, "jvp", "x")
        _run_derivatives(kind, mode, p, "jvp", "xv")

    _fixed_then_drawn(kind, ("float64",), run)


@pytest.mark.parametrize("kind,mode", _params())
def test_vjp_wrt_x_matches_finite_differences(kind: str, mode: Any) -> None:
    _fixed_then_drawn(kind, ("float64",),
                      lambda p, choose: _run_derivatives(kind, mode, p, "vjp", "x"))


@pytest.mark.parametrize("kind,mode", _params(tuple(k for k in UPDATES if k != "apply")))
def test_vjp_wrt_x_and_values_matches_finite_differences(kind: str, mode: Any) -> None:
    _fixed_then_drawn(kind, ("float64",),
                      lambda p, choose: _run_derivatives(kind, mode, p, "vjp", "xv"))


@pytest.mark.parametrize("kind,mode", _params())
def test_matches_jax(kind: str, mode: Any) -> None:
    pytest.importorskip("jax")
    _fixed_then_drawn(kind, ("float64", "float32", "int32"),
                      lambda p, choose: _run_jax(kind, mode, p))


@pytest.mark.parametrize("kind", KINDS)
def test_backward_slice_from_before_the_start(kind: str) -> None:
    """x[-5::-1] on 3 elements is empty: nothing is updated or read."""
    for case in (Case("slice", (3,), slice(-5, None, -1)),
                 Case("slice_slice", (3, 2), (slice(-4, 0, -2), slice(None)))):
        for mode in MODES:
            p = _fixed_problem(case)
            for values in (p["values"], 1.5):
                _run_eager(kind, mode, {**p, "values": values}, as_arrays=False)


@pytest.mark.parametrize("index", ["rows", "rows_col", "col_rows", "rows_newaxis_slice"])
def test_traced_index_programs_carry_no_table_of_x_size(index: str) -> None:
    """An update or read at a traced index stages per-axis tables (their lengths), never a
    coordinate table of x's whole shape (it made ``jit(x.at[i].set)`` on a 2048x2048 array
    carry three 2049x2049 int64 constants); the values are NumPy's."""
    shape = (40, 30)
    idx = {"rows": lambda i: i, "rows_col": lambda i: (i, 3), "col_rows": lambda i: (2, i),
           "rows_newaxis_slice": lambda i: (i, None, slice(2, 9, 3))}[index]
    x = np.arange(1200.0).reshape(shape)
    i = np.array([3, -1, 7, 0])

    def upd(v: Any, j: Any) -> Any:
        return v.at[idx(j)].add(1.0)

    closed = fg.make_jaxpr(upd)(x, i)
    assert sum(np.size(c) for c in closed.consts) <= sum(s + 1 for s in shape)
    want = x.copy()
    np.add.at(want, idx(i), 1.0)
    np.testing.assert_array_equal(fg.jit(upd)(x, i), want)
    np.testing.assert_array_equal(fg.jit(lambda v, j: v[idx(j)])(x, i), x[idx(i)])
