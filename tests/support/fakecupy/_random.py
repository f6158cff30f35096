"""``cupy.random.RandomState``: CuPy's cuRAND-backed generator, emulated with NumPy's.

Draws are made "on the device" (no host-to-device transfer is counted; one launch is) and
follow CuPy's rules: only float32 and float64 results, ``size`` as a shape. The bits are
NumPy's, not cuRAND's: tests check distributions and seeding, never CuPy's exact values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fakecupy._array import STATS, ndarray, unwrap, wrap


def _float_dtype(dtype: Any) -> np.dtype[Any]:
    dt = np.dtype(dtype)
    if dt.char not in ("f", "d"):
        raise TypeError("cupy.random only supports float32 and float64")
    return dt


def _shape(size: Any) -> tuple[int, ...]:
    if size is None:
        return ()
    return (int(size),) if np.isscalar(size) else tuple(int(s) for s in size)


class RandomState:
    """``cupy.random.RandomState(seed)``: one cuRAND generator on the current device."""

    __module__ = "cupy.random._generator"

    def __init__(self, seed: Any = None, method: Any = None) -> None:
        self.method = method
        self.seed(seed)

    def seed(self, seed: Any = None) -> None:
        if isinstance(seed, ndarray):
            raise TypeError("emulated RandomState.seed takes a host integer")
        self._rng = np.random.default_rng(None if seed is None else int(seed) % 2 ** 64)

    def _out(self, host: np.ndarray) -> ndarray:
        STATS.launches += 1
        out = wrap(np.ascontiguousarray(host))
        assert isinstance(out, ndarray)
        return out

    def random_sample(self, size: Any = None, dtype: Any = float) -> ndarray:
        dt = _float_dtype(dtype)
        return self._out(self._rng.random(_shape(size), dtype=dt))

    random = random_sample

    def rand(self, *size: int, dtype: Any = float) -> ndarray:
        return self.random_sample(size, dtype)

    def standard_normal(self, size: Any = None, dtype: Any = float) -> ndarray:
        dt = _float_dtype(dtype)
        return self._out(self._rng.standard_normal(_shape(size), dtype=dt))

    def randn(self, *size: int, dtype: Any = float) -> ndarray:
        return self.standard_normal(size, dtype)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None,
               dtype: Any = float) -> ndarray:
        return self._affine(self._rng.standard_normal, loc, scale, size, dtype, "normal")

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None,
                dtype: Any = float) -> ndarray:
        lo, hi = unwrap(low, "uniform"), unwrap(high, "uniform")
        return self._affine(self._rng.random, lo, hi - lo, size, dtype, "uniform")

    def _affine(self, draw: Any, shift: Any, scale: Any, size: Any, dtype: Any,
                name: str) -> ndarray:
        """``shift + scale * draw(...)``: of ``size``, else of the parameters' shape."""
        dt = _float_dtype(dtype)
        lo, sc = unwrap(shift, name), unwrap(scale, name)
        shape = _shape(size) if size is not None else np.broadcast_shapes(
            np.shape(lo), np.shape(sc))
        return self._out((lo + draw(shape, dtype=dt) * sc).astype(dt))
