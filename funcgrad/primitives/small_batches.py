"""Batches of small matrices factored and solved in compiled loops (numba), for the NumPy
impls of ``lu``, ``triangular_solve`` and ``cholesky`` in :mod:`.decompositions`.

On a batch of 16x16 matrices one LAPACK/BLAS call through f2py costs ~3 us, more than
its arithmetic; PyTorch and XLA loop over the batch in C++. These kernels loop over the
batch and the matrices in one numba function instead, with LAPACK's unblocked algorithms
(getf2 with partial pivoting, potf2, trsm's substitution), so results agree with the
LAPACK path to rounding, with the same pivots, and with LAPACK's conventions at the edges:
a zero pivot is kept (no scaling under it, inf/NaN in later solves), and a matrix that is
not positive definite gives a NaN factor (JAX's). The kernels only pay off while the
matrices are small (the loops are not blocked): ``use_loops`` says when to take them.

Without numba (the ``cpu-fusion`` extra), or with ``FUNCGRAD_CPU_FUSION=0``, everything
stays on the LAPACK path. The kernels are compiled on first use, once per dtype, and
cached on disk (``cache=True``), so later processes load them in milliseconds.

>>> import numpy as np
>>> a = np.array([[[2.0, 1.0], [4.0, 3.0]]])
>>> out = lu_batch(a)
>>> out is None or out[1].tolist() == [[1, 1]]   # None without numba
True
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

MAX_N = {"lu": 32, "trsm": 48, "cholesky": 48}
"""The largest matrix order each loop takes: the crossover against the per-matrix
LAPACK/BLAS calls measured at batches of 2 to 64 (the loops are unblocked: O(n^3) without
cache tiling; see benchmarks/README.md)."""

MIN_BATCH = 4
"""Fewer matrices go to LAPACK: the first batched call of a process loads the kernels
(~0.5 s; their first compile ever, 1-2 s, is cached on disk), which a few matrices'
savings (~3 us each) never repay."""


def use_loops(kernel: str, batch: int, *dims: int) -> bool:
    """Whether a batch of ``batch`` matrices with these orders goes to the compiled loop
    ``kernel`` ("lu", "trsm" or "cholesky").

    >>> use_loops("lu", 1, 16, 16)
    False
    """
    if batch < MIN_BATCH or max(dims, default=0) > MAX_N[kernel]:
        return False
    return _kernels() is not None


@functools.cache
def _kernels() -> dict[str, Any] | None:
    from funcgrad.numba_switch import enabled  # noqa: PLC0415

    if not enabled():
        return None
    import numba  # noqa: PLC0415 - present: enabled() checked

    # IEEE arithmetic (x / 0 is inf, not ZeroDivisionError), cached on disk
    jit = numba.njit(cache=True, nogil=True, error_model="numpy", boundscheck=False)

    @jit
    def lu(a: Any, piv: Any, perm: Any) -> None:  # pragma: no cover - compiled
        nb, m, n = a.shape
        k = min(m, n)
        tiny = np.finfo(a.dtype).tiny
        for b in range(nb):
            for i in range(m):
                perm[b, i] = i
            for j in range(k):
                p = j
                best = abs(a[b, j, j])
                for i in range(j + 1, m):
                    v = abs(a[b, i, j])
                    if v > best:  # the first largest, as idamax
                        best = v
                        p = i
                piv[b, j] = p
                if p != j:
                    for c in range(n):
                        t = a[b, j, c]
                        a[b, j, c] = a[b, p, c]
                        a[b, p, c] = t
                    t2 = perm[b, j]
                    perm[b, j] = perm[b, p]
                    perm[b, p] = t2
                d = a[b, j, j]
                if d != 0:
                    if abs(d) >= tiny:
                        r = 1 / d
                        for i in range(j + 1, m):
                            a[b, i, j] *= r
                    else:
                        for i in range(j + 1, m):
                            a[b, i, j] /= d
                for i in range(j + 1, m):
                    f = a[b, i, j]
                    if f != 0:
                        for c in range(j + 1, n):
                            a[b, i, c] -= f * a[b, j, c]

    @jit
    def trsm(a: Any, x: Any, lower: bool, trans: bool, unit: bool) -> None:  # pragma: no cover
        # x <- op(a)^-1 x in place, column-oriented substitution (BLAS trsm's order)
        nb, n, r = x.shape
        forward = lower != trans
        for b in range(nb):
            for s in range(n):
                i = s if forward else n - 1 - s
                if not unit:
                    d = a[b, i, i]
                    for c in range(r):
                        x[b, i, c] /= d
                rng = range(i + 1, n) if forward else range(0, i)
                for k in rng:
                    f = a[b, i, k] if trans else a[b, k, i]
                    if f != 0:
                        for c in range(r):
                            x[b, k, c] -= f * x[b, i, c]

    @jit
    def cholesky(a: Any, out: Any) -> None:  # pragma: no cover - compiled
        # potf2 on the lower triangle of each matrix of a; NaN factor where it fails
        nb, n, _ = a.shape
        for b in range(nb):
            ok = True
            for j in range(n):
                s = a[b, j, j]
                for k in range(j):
                    s -= out[b, j, k] * out[b, j, k]
                if not s > 0:
                    ok = False
                    break
                d = math.sqrt(s)
                out[b, j, j] = d
                for i in range(j + 1, n):
                    t = a[b, i, j]
                    for k in range(j):
                        t -= out[b, i, k] * out[b, j, k]
                    out[b, i, j] = t / d
            for i in range(n):
                for c in range(i + 1, n):
                    out[b, i, c] = 0
                if not ok:  # JAX's failed factor: NaN on and below the diagonal
                    for c in range(i + 1):
                        out[b, i, c] = np.nan

    return {"lu": lu, "trsm": trsm, "cholesky": cholesky}


def _kernel(name: str) -> Any:
    ks = _kernels()
    return None if ks is None else ks[name]


def lu_batch(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(lu, pivots, permutation)`` of each matrix of ``x`` (batched over leading axes), as
    ``lax.linalg.lu``; None without numba.

    >>> import numpy as np
    >>> out = lu_batch(np.array([[[0.0, 1.0], [1.0, 0.0]]]))
    >>> out is None or out[2].tolist() == [[1, 0]]
    True
    """
    kern = _kernel("lu")
    if kern is None:
        return None
    *batch, m, n = x.shape
    a = np.array(x.reshape((-1, m, n)), order="C", copy=True)
    piv = np.empty((a.shape[0], min(m, n)), np.int32)
    perm = np.empty((a.shape[0], m), np.int32)
    kern(a, piv, perm)
    return (a.reshape(x.shape), piv.reshape((*batch, min(m, n))),
            perm.reshape((*batch, m)))


def trsm_batch(a: np.ndarray, b: np.ndarray, lower: bool, trans: bool, unit: bool
               ) -> np.ndarray | None:
    """``op(a)^-1 b`` for stacks of triangular ``a`` (one triangle read, the diagonal
    unchecked: inf/NaN at a zero, as BLAS); None without numba.

    >>> import numpy as np
    >>> x = trsm_batch(np.array([[[2.0, 0.0], [1.0, 1.0]]]), np.ones((1, 2, 1)), True,
    ...                False, False)
    >>> x is None or x.ravel().tolist() == [0.5, 0.5]
    True
    """
    kern = _kernel("trsm")
    if kern is None:
        return None
    n, r = b.shape[-2:]
    fa = np.ascontiguousarray(a.reshape((-1, n, n)))
    x = np.array(b.reshape((-1, n, r)), order="C", copy=True)
    kern(fa, x, bool(lower), bool(trans), bool(unit))
    return x.reshape(b.shape)


def cholesky_batch(a: np.ndarray) -> np.ndarray | None:
    """The lower Cholesky factors of the matrices of ``a`` from their lower triangles; an
    all-NaN factor where one is not positive definite (JAX's); None without numba.

    >>> import numpy as np
    >>> out = cholesky_batch(np.array([[[4.0, 9.0], [2.0, 5.0]], [[-1.0, 0.0], [0.0, 1.0]]]))
    >>> out is None or out.tolist()[0] == [[2.0, 0.0], [1.0, 2.0]]
    True
    """
    kern = _kernel("cholesky")
    if kern is None:
        return None
    n = a.shape[-1]
    fa = np.ascontiguousarray(a.reshape((-1, n, n)))
    out = np.empty(fa.shape, a.dtype)
    kern(fa, out)
    return out.reshape(a.shape)


__all__ = ["MAX_N", "MIN_BATCH", "cholesky_batch", "lu_batch", "trsm_batch", "use_loops"]
