"""The Schur and Hessenberg decompositions as primitives, ``schur`` and ``hessenberg``, as
``jax.lax.linalg``'s: LAPACK's ``gees`` and ``gehrd`` through SciPy, batched over leading
axes, on the host (JAX runs them on the CPU only; a GPU operand is copied there and back).

``schur`` gives ``[t, z]`` (or ``[t]``) with ``x == z @ t @ z^H``: ``t`` quasi upper
triangular for real ``x`` (2x2 blocks for complex eigenvalue pairs), upper triangular for
complex ``x``. ``hessenberg`` gives ``[a, taus]``: the Hessenberg form in the upper
triangle and first subdiagonal of ``a``, and below it, with ``taus``, the Householder
reflectors of ``q`` (LAPACK's packed form). As in JAX, neither is differentiable: the
rules raise ``NotImplementedError`` (a :class:`NonDifferentiableError` too).

>>> import numpy as np
>>> from funcgrad.primitives.schur_forms import schur
>>> t, z = schur(np.array([[2.0, 0.0], [0.0, 1.0]]))
>>> np.asarray(t).tolist()
[[2.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Primitive
from funcgrad.errors import (
    DTypeError,
    NonDifferentiableError,
    ShapeError,
    UnsupportedDTypeError,
)
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import move_to_front

_HALF = frozenset({np.dtype(np.float16), np.dtype(dtypes.bfloat16)})


class NoDifferentiationRuleError(NonDifferentiableError, NotImplementedError):
    """A primitive JAX gives no derivative: JAX raises ``NotImplementedError`` for it,
    funcgrad's callers catch :class:`NonDifferentiableError`; this is both."""


class RankError(ShapeError, TypeError):
    """An operand of too low a rank: JAX raises ``TypeError`` for it (funcgrad's shape
    errors are ``ValueError``); this is both."""


def _check(name: str, x: ShapedArray) -> None:
    if dtypes.kind(x.dtype) not in "fc":
        raise DTypeError(f"{name} does not accept dtype {x.dtype} at position 0. Accepted "
                         "dtypes at position 0 are subtypes of floating, complexfloating.")
    if x.dtype in _HALF:
        # LAPACK has no half-precision routines (JAX raises on the CPU as well).
        raise UnsupportedDTypeError(f"Unsupported dtype {x.dtype} for {name}; cast to "
                                    "float32 first, e.g. x.astype(jnp.float32)")
    if x.ndim < 2:
        raise RankError(f"Input 0 to {name} must have rank at least 2, but got "
                        f"shape={x.shape}")
    if x.shape[-1] != x.shape[-2]:
        if name == "hessenberg":
            raise ShapeError("Argument to Hessenberg reduction must have shape [..., n, n], "
                             f"got shape {x.shape}")
        raise ShapeError(f"The input to {name} must be a square matrix. Got shape "
                         f"{x.shape}.")


def _host(x: Any) -> np.ndarray:
    return np.asarray(x.get() if hasattr(x, "get") else x)


def _per_matrix(fn: Callable[[np.ndarray], list[np.ndarray]], x: np.ndarray,
                shapes: Sequence[tuple[int, ...]], dts: Sequence[Any]) -> list[np.ndarray]:
    """``fn`` on each matrix of ``x`` (leading axes batch), results stacked."""
    batch = x.shape[:-2]
    outs = [np.empty((*batch, *s), d) for s, d in zip(shapes, dts)]
    for idx in np.ndindex(batch):
        for o, r in zip(outs, fn(x[idx])):
            o[idx] = r
    return outs


def _no_rule(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def fail() -> NoReturn:
        raise NoDifferentiationRuleError(f"Differentiation rule for '{name}' not implemented")

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        outs = PRIMITIVES_HERE[name].bind(*primals, **params)
        if all(t is None for t in tangents):
            return outs, [None] * len(outs)
        fail()

    def vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any],
            **params: Any) -> list[Any]:
        fail()

    return jvp, vjp


def _front_batch(prim: Primitive) -> Callable[..., Any]:
    def rule(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        out = prim.bind(move_to_front(args[0], dims[0]), **params)
        return out, [0] * len(out)

    return rule


# ------------------------------------------------------------------------- schur


def schur(x: Any, compute_schur_vectors: bool = True) -> list[Any]:
    """``[t, z]`` (``[t]`` without the vectors): the Schur form of each square matrix of
    ``x`` and its unitary transformation, ``x == z @ t @ z^H``."""
    return schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors))


def _schur_abstract(x: ShapedArray, *, compute_schur_vectors: bool
                    ) -> tuple[ShapedArray, ...]:
    _check("schur", x)
    return (ShapedArray(x.shape, x.dtype),) * (1 + int(compute_schur_vectors))


def _gees(a: np.ndarray) -> list[np.ndarray]:
    import scipy.linalg  # noqa: PLC0415 - loaded on first use

    if not np.all(np.isfinite(a)):
        # LAPACK's answer for non-finite input is unspecified; NaN says so.
        return [np.triu(np.full(a.shape, np.nan, a.dtype)), np.full(a.shape, np.nan, a.dtype)]
    output = "complex" if a.dtype.kind == "c" else "real"
    t, z = scipy.linalg.schur(a, output=output, check_finite=False)
    return [t, z]


def _schur_impl(xp: Any, x: Any, *, compute_schur_vectors: bool) -> list[Any]:
    host = _host(x)
    n = host.shape[-1]
    outs = _per_matrix(_gees, host, [(n, n)] * 2, [host.dtype] * 2) if n else \
        [np.zeros(host.shape, host.dtype)] * 2
    return [xp.asarray(o) for o in outs[:1 + int(compute_schur_vectors)]]


schur_p = Primitive("schur", abstract_eval=_schur_abstract, impl=_schur_impl,
                    multiple_results=True)


# -------------------------------------------------------------------- hessenberg


def hessenberg(x: Any) -> list[Any]:
    """``[a, taus]``: LAPACK's packed Hessenberg reduction of each square matrix of ``x``
    (the form in ``triu(a, -1)``, the reflectors of ``q`` below it and in ``taus``)."""
    return hessenberg_p.bind(x)


def _hessenberg_abstract(x: ShapedArray) -> tuple[ShapedArray, ShapedArray]:
    _check("hessenberg", x)
    n = x.shape[-1]
    return ShapedArray(x.shape, x.dtype), ShapedArray((*x.shape[:-2], max(n - 1, 0)),
                                                      x.dtype)


def _gehrd(a: np.ndarray) -> list[np.ndarray]:
    from scipy.linalg import lapack  # noqa: PLC0415 - loaded on first use

    n = a.shape[-1]
    gehrd, gehrd_lwork = lapack.get_lapack_funcs(("gehrd", "gehrd_lwork"), (a,))
    lwork = lapack._compute_lwork(gehrd_lwork, n, lo=0, hi=n - 1)  # noqa: SLF001
    h, tau, _ = gehrd(a, lo=0, hi=n - 1, lwork=lwork, overwrite_a=False)
    return [h, tau[:n - 1]]


def _hessenberg_impl(xp: Any, x: Any) -> list[Any]:
    host = _host(x)
    n = host.shape[-1]
    if n == 0:
        outs = [np.zeros(host.shape, host.dtype), np.zeros(host.shape[:-1], host.dtype)]
    else:
        outs = _per_matrix(_gehrd, host, [(n, n), (n - 1,)], [host.dtype] * 2)
    return [xp.asarray(o) for o in outs]


hessenberg_p = Primitive("hessenberg", abstract_eval=_hessenberg_abstract,
                         impl=_hessenberg_impl, multiple_results=True)

PRIMITIVES_HERE = {"schur": schur_p, "hessenberg": hessenberg_p}

for _p, _fn in ((schur_p, schur), (hessenberg_p, hessenberg)):
    _p.jvp, _p.vjp = _no_rule(_p.name)
    _p.vjp_reads = "x0"
    _p.batch = _front_batch(_p)
    _p.describe(lax=_p.name, fusion=None, cuda=None, ufunc=None, torch_method=None,
                torch_node=f"Linalg{_p.name.capitalize()}", lax_fn=_fn)

__all__ = ["NoDifferentiationRuleError", "RankError", "hessenberg", "hessenberg_p", "schur",
           "schur_p"]
