"""``torch.quasirandom.SobolEngine``: PyTorch's (scrambled) Sobol sequences, bit for bit.

PyTorch's direction numbers are Joe and Kuo's (search criterion D(6), 21201 dimensions),
the table SciPy ships as ``scipy/stats/_sobol_direction_numbers.npz``: the state is built
from it as PyTorch's ``_sobol_engine_initialize_state_`` builds it (Bratley and Fox's
recurrence, each column scaled by ``2**(29 - j)``), points are Gray-code XORs of its
columns (``_sobol_engine_draw``) times ``2**-30``, and scrambling draws its shift and
lower-triangular matrices with ``randint`` from the generator PyTorch uses (a new one
seeded with ``seed``, else the default one), so the same seed gives PyTorch's points.

>>> import funcgrad.torch as torch
>>> torch.quasirandom.SobolEngine(dimension=3).draw(3)
tensor([[0.0000, 0.0000, 0.0000],
        [0.5000, 0.5000, 0.5000],
        [0.7500, 0.2500, 0.2500]])
"""

from __future__ import annotations

import importlib.util
import os
from functools import cache
from typing import Any

import numpy as np

from funcgrad.torch import _dtypes as D
from funcgrad.torch._tensor import Tensor

MAXBIT = 30
MAXDIM = 21201


@cache
def _direction_numbers() -> tuple[np.ndarray, np.ndarray]:
    """Joe and Kuo's primitive polynomials and initial direction numbers (SciPy's copy)."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("SobolEngine needs SciPy's table of Sobol direction numbers")
    path = os.path.join(list(spec.submodule_search_locations)[0], "stats",
                        "_sobol_direction_numbers.npz")
    with np.load(path) as z:
        return np.asarray(z["poly"], np.int64), np.asarray(z["vinit"], np.int64)


def _initial_state(dimension: int) -> np.ndarray:
    """PyTorch's ``_sobol_engine_initialize_state_``: row 0 all ones; row ``d``'s first
    ``m`` (the polynomial's degree) entries from the table, the rest by the recurrence
    ``v[j] = v[j - m] ^ sum_k a_k 2**k v[j - k]``; then column ``j`` times ``2**(29 - j)``."""
    poly_all, vinit_all = _direction_numbers()
    poly, vinit = poly_all[:dimension], vinit_all[:dimension]
    v = np.zeros((dimension, MAXBIT), np.int64)
    v[0] = 1
    deg = np.array([int(p).bit_length() - 1 for p in poly], np.int64)
    deg[0] = 0
    rows = np.arange(dimension)
    for j in range(MAXBIT):
        init = (rows > 0) & (j < deg)
        if init.any():
            v[init, j] = vinit[init, j]
        rec = np.nonzero((rows > 0) & (j >= deg))[0]
        if rec.size == 0:
            continue
        m = deg[rec]
        newv = v[rec, j - m]
        for k in range(int(m.max())):
            shift = np.maximum(m - 1 - k, 0)
            use = (k < m) & (((poly[rec] >> shift) & 1) == 1)
            if use.any():
                newv[use] ^= (2 ** (k + 1)) * v[rec[use], j - k - 1]
        v[rec, j] = newv
    return v * (2 ** np.arange(MAXBIT - 1, -1, -1, dtype=np.int64))


def _rightmost_zero(n: np.ndarray) -> np.ndarray:
    """The index of the lowest zero bit of each ``n``."""
    return np.log2((~n) & (n + 1)).round().astype(np.int64)


def _parity(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> 32)
    x = x ^ (x >> 16)
    x = x ^ (x >> 8)
    x = x ^ (x >> 4)
    x = x ^ (x >> 2)
    x = x ^ (x >> 1)
    return x & 1


def _scrambled(state: np.ndarray, ltm: np.ndarray) -> np.ndarray:
    """PyTorch's ``_sobol_engine_scramble_``: the matrices' rows (diagonal set to one) as
    integers ``l[d, p]``; entry ``(d, j)`` becomes the integer whose bit ``29 - p`` is the
    parity of ``l[d, p] & state[d, j]`` (the low 30 bits)."""
    ltm = ltm.copy()
    idx = np.arange(MAXBIT)
    ltm[:, idx, idx] = 1
    pow2 = 2 ** np.arange(MAXBIT - 1, -1, -1, dtype=np.int64)
    dots = (ltm * pow2).sum(-1) & (2 ** MAXBIT - 1)  # (dim, p)
    bits = _parity(dots[:, None, :] & (state[:, :, None] & (2 ** MAXBIT - 1)))  # (d, j, p)
    return (bits << (MAXBIT - 1 - idx)).sum(-1)


class SobolEngine:
    """Draws (scrambled) Sobol points as PyTorch's ``torch.quasirandom.SobolEngine``
    (dimensions 1 to 21201)."""

    MAXBIT = MAXBIT
    MAXDIM = MAXDIM

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None
                 ) -> None:
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality "
                             f"for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self._state = _initial_state(dimension)
        if not self.scramble:
            self._shift = np.zeros(dimension, np.int64)
        else:
            self._scramble()
        self._quasi = self._shift.copy()
        # PyTorch: (quasi / 2**30) in the default dtype of the moment, cast when drawn.
        self._first_point = (self._quasi.astype(D.get_default_dtype().np)
                             / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    @property
    def sobolstate(self) -> Tensor:
        return Tensor._from_data(self._state.copy())

    @property
    def shift(self) -> Tensor:
        return Tensor._from_data(self._shift.copy())

    @property
    def quasi(self) -> Tensor:
        return Tensor._from_data(self._quasi.copy())

    def _scramble(self) -> None:
        from funcgrad.torch._creation import randint  # noqa: PLC0415
        from funcgrad.torch._random import Generator  # noqa: PLC0415

        g = None
        if self.seed is not None:
            g = Generator()
            g.manual_seed(self.seed)
        shift_ints = np.asarray(randint(2, (self.dimension, self.MAXBIT), generator=g)._host())
        self._shift = shift_ints @ (2 ** np.arange(self.MAXBIT, dtype=np.int64))
        ltm = np.tril(np.asarray(randint(2, (self.dimension, self.MAXBIT, self.MAXBIT),
                                         generator=g)._host()))
        self._state = _scrambled(self._state, ltm)

    def _draw(self, n: int, start: int) -> np.ndarray:
        """``n`` points after ``start`` generated (``_sobol_engine_draw``), as integers."""
        if n <= 0:
            return np.zeros((0, self.dimension), np.int64)
        cols = self._state[:, _rightmost_zero(np.arange(start, start + n, dtype=np.int64))]
        pts = np.bitwise_xor.accumulate(cols.T, axis=0) ^ self._quasi
        self._quasi = pts[-1].copy()
        return pts

    def draw(self, n: int = 1, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """The next ``n`` points, shape ``(n, dimension)``."""
        dt = D.to_torch(dtype) if dtype is not None else D.get_default_dtype()
        npdt = dt.np
        if self.num_generated == 0:
            first = self._first_point.astype(npdt)
            if n == 1:
                result = first
            else:
                rest = self._draw(n - 1, 0)
                result = np.concatenate([first, _scaled(rest, npdt)], axis=-2)
        else:
            result = _scaled(self._draw(n, self.num_generated - 1), npdt)
        self.num_generated += n
        res = Tensor._from_data(np.ascontiguousarray(result))
        if out is not None:
            out.resize_as_(res).copy_(res)  # type: ignore[attr-defined]
            return out
        return res

    def draw_base2(self, m: int, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """The next ``2**m`` points (the total drawn must stay a power of two)."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError("The balance properties of Sobol' points require "
                             f"n to be a power of 2. {self.num_generated} points have been "
                             f"previously generated, then: n={self.num_generated}+2**{m}="
                             f"{total_n}. If you still want to do this, please use "
                             "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> SobolEngine:
        """Back to the first point."""
        self._quasi = self._shift.copy()
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> SobolEngine:
        """Skip ``n`` points."""
        if self.num_generated == 0:
            self._draw(n - 1, 0)
        else:
            self._draw(n, self.num_generated - 1)
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        fmt = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt += ["scramble=True"]
        if self.seed is not None:
            fmt += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt) + ")"


def _scaled(points: np.ndarray, dtype: Any) -> np.ndarray:
    """``result.mul_(1 / 2**30)`` on the points converted to ``dtype`` (float32 or
    float64; other dtypes through float64)."""
    dt = np.dtype(dtype)
    work = dt if dt in (np.dtype(np.float32), np.dtype(np.float64)) else np.dtype(np.float64)
    return (points.astype(work) * work.type(2.0 ** -MAXBIT)).astype(dt)


__all__ = ["SobolEngine"]
