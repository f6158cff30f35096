"""Plain NumPy functions applied to funcgrad Arrays and tracers, against real JAX.

JAX's Arrays and tracers define ``__array__`` but no ``__array_function__``. So a NumPy
function that delegates to a method of a non-ndarray argument (``_wrapfunc`` and
``_wrapreduction``: ``np.sum``, ``np.mean``, ``np.reshape``, ``np.argmax``...) calls the
Array's or tracer's method and gives a JAX Array, under ``jit``, ``grad`` and ``vmap`` too;
``np.shape``/``np.ndim``/``np.size``/``np.flip`` only read attributes or index; ufuncs and the
functions that convert their argument (``np.concatenate``, ``np.clip``, ``np.linalg.norm``,
``np.asarray``...) give NumPy values on a concrete Array and JAX's
TracerArrayConversionError on a tracer. funcgrad does the same; each case is run with both
libraries and the outcomes (result kind, dtype and value, or error type) compared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

# Each case gets the traced or concrete Array ``t`` and the numpy module of its library.
CASES: dict[str, Callable[[Any, Any], Any]] = {
    "sum": lambda t, m: np.sum(t),
    "sum_axis_keepdims": lambda t, m: np.sum(t, axis=0, keepdims=True),
    "sum_where": lambda t, m: np.sum(t, where=np.array([True, False, True])),
    "prod": lambda t, m: np.prod(t),
    "mean": lambda t, m: np.mean(t),
    "std_ddof": lambda t, m: np.std(t, ddof=1),
    "var": lambda t, m: np.var(t),
    "max_initial": lambda t, m: np.max(t, initial=0.0),
    "amin": lambda t, m: np.amin(t),
    "any": lambda t, m: np.any(t),
    "all": lambda t, m: np.all(t),
    "cumsum": lambda t, m: np.cumsum(t),
    "cumprod": lambda t, m: np.cumprod(t),
    "round": lambda t, m: np.round(t, 1),
    "transpose": lambda t, m: np.transpose(t[None], (1, 0)),
    "reshape": lambda t, m: np.reshape(t, (3, 1)),
    "squeeze": lambda t, m: np.squeeze(t[None], axis=0),
    "swapaxes": lambda t, m: np.swapaxes(t[None], 0, 1),
    "take": lambda t, m: np.take(t, [0, 2]),
    "take_raise": lambda t, m: np.take(t, 1, axis=0),
    "argmax": lambda t, m: np.argmax(t),
    "argmin_keepdims": lambda t, m: np.argmin(t, keepdims=True),
    "argsort": lambda t, m: np.argsort(t),
    "nonzero": lambda t, m: np.nonzero(t),
    "repeat": lambda t, m: np.repeat(t, 2),
    "diagonal": lambda t, m: np.diagonal(m.outer(t, t)),
    "trace": lambda t, m: np.trace(m.outer(t, t)),
    "searchsorted": lambda t, m: np.searchsorted(m.sort(t), 1.5),
    "shape_ndim_size": lambda t, m: t * np.shape(t)[0] + np.ndim(t) + np.size(t),
    "flip": lambda t, m: np.flip(t),
    "put": lambda t, m: np.put(t, [0], [5.0]),
    "min_out": lambda t, m: np.min(t, out=np.empty(())),
    # Functions that convert their argument, and ufuncs.
    "sin": lambda t, m: np.sin(t),
    "add_ndarray": lambda t, m: np.add(np.ones(3), t),
    "clip": lambda t, m: np.clip(t, 0.0, 1.5),
    "sort": lambda t, m: np.sort(t),
    "ptp": lambda t, m: np.ptp(t),
    "compress": lambda t, m: np.compress([True, False, True], t),
    "concatenate": lambda t, m: np.concatenate([t, t]),
    "norm": lambda t, m: np.linalg.norm(t),
    "asarray": lambda t, m: np.asarray(t),
    "dot": lambda t, m: np.dot(t, t),
}

# Where funcgrad knowingly differs: JAX's np.argsort under jit fails only when the sort is
# lowered (a TypeError from MLIR, ``stable=None``); funcgrad's method raises that TypeError
# while tracing, so NumPy falls back to converting the tracer (TracerArrayConversionError).
KNOWN_DIFFERENCES = {("argsort", "jit")}

MODES = ("eager", "jit", "grad", "vmap")
X = [1.0, 2.0, 0.5]


# JAX's default 32-bit mode, for both libraries (the conftest's ``x32`` marker).
pytestmark = pytest.mark.x32


@pytest.fixture
def jax_mods() -> tuple[Any, Any]:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    return jax, jnp


def _describe(v: Any, array_type: type) -> Any:
    """What a result is: its kind (library Array, ndarray, NumPy or Python scalar), dtype
    and values; a tuple elementwise."""
    if isinstance(v, tuple):
        return tuple(_describe(e, array_type) for e in v)
    kind = ("Array" if isinstance(v, array_type) else
            "ndarray" if isinstance(v, np.ndarray) else type(v).__name__)
    a = np.asarray(v)
    return kind, str(a.dtype), np.round(a.astype(np.float64), 4).tolist()


def _outcome(lib: Any, np_mod: Any, case: str, mode: str) -> Any:
    fn = CASES[case]
    x = np_mod.asarray(X)

    def f(t: Any) -> Any:
        return fn(t, np_mod)

    def scalar(t: Any) -> Any:
        out = f(t)
        out = out[0] if isinstance(out, tuple) else out
        return np_mod.sum(np_mod.asarray(out) * 1.0)

    try:
        if mode == "eager":
            out = f(x)
        elif mode == "jit":
            out = lib.jit(f)(x)
        elif mode == "grad":
            out = lib.grad(scalar)(x)
        else:
            out = lib.vmap(f)(np_mod.stack([x, 2 * x]))
    except Exception as e:  # noqa: BLE001 - the error type is the outcome compared
        return "error", type(e).__name__
    return _describe(out, lib.Array)


@pytest.mark.parametrize("case", list(CASES))
def test_numpy_function_matches_jax(case: str, jax_mods: tuple[Any, Any]) -> None:
    jax, jnp = jax_mods
    for mode in MODES:
        if (case, mode) in KNOWN_DIFFERENCES:
            continue
        want = _outcome(jax, jnp, case, mode)
        got = _outcome(fg, fnp, case, mode)
        assert got == want, (case, mode)


def test_known_difference_is_still_an_error(jax_mods: tuple[Any, Any]) -> None:
    jax, jnp = jax_mods
    assert _outcome(jax, jnp, "argsort", "jit") == ("error", "TypeError")
    assert _outcome(fg, fnp, "argsort", "jit") == ("error", "TracerArrayConversionError")


def test_np_sum_under_jit_and_grad_without_jax() -> None:
    """The examples of the JAX face, without JAX: np.sum of a tracer stays traced."""
    out = fg.jit(lambda x: np.sum(x))(fnp.ones(3))
    assert isinstance(out, fg.Array) and float(out) == 3.0
    g = fg.grad(lambda x: np.sum(x ** 2))(1.0)
    assert isinstance(g, fg.Array) and float(g) == 2.0
    with pytest.raises(fg.errors.TracerArrayConversionError):
        fg.jit(lambda x: np.concatenate([x, x]))(fnp.ones(3))
