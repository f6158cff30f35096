"""Threefry-2x32 on the CPU in one pass: a numba loop (when numba is installed and CPU
fusion is not switched off), else NumPy over cache-sized blocks with in-place operations.

The array-module version in ``prng.py`` makes two full-size temporaries per operation (about
120 passes over memory for 20 rounds); here each element's 20 rounds run in registers (numba)
or each block's rounds run in cache (NumPy), with the same bits.

>>> import numpy as np
>>> o1, o2 = threefry_numpy(np.uint32(0x13198a2e), np.uint32(0x03707344),
...                         np.array([0x243f6a88], np.uint32), np.array([0x85a308d3], np.uint32))
>>> hex(int(o1[0])), hex(int(o2[0]))
('0xc4923a9c', '0x483df7a0')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.numba_switch import switched_on

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA
MIN_SIZE = 1 << 16
"""Smaller hashes stay on the array-module path (numba compiles the loop once, ~1 s)."""
_BLOCK = 1 << 14
_kernel: Any = None


def _threefry_loop(k1: Any, k2: Any, x1: Any, x2: Any, o1: Any, o2: Any) -> None:
    """The 20 rounds per element, written out for numba (operands of size 1 broadcast)."""
    u = np.uint32
    a1, a2, b1, b2 = k1.size > 1, k2.size > 1, x1.size > 1, x2.size > 1
    for i in range(o1.size):
        s0 = u(k1[i if a1 else 0])
        s1 = u(k2[i if a2 else 0])
        s2 = u(s0 ^ s1 ^ u(0x1BD11BDA))
        x = u(x1[i if b1 else 0] + s0)
        y = u(x2[i if b2 else 0] + s1)
        x = u(x + y)
        y = u(x ^ u((y << u(13)) | (y >> u(19))))
        x = u(x + y)
        y = u(x ^ u((y << u(15)) | (y >> u(17))))
        x = u(x + y)
        y = u(x ^ u((y << u(26)) | (y >> u(6))))
        x = u(x + y)
        y = u(x ^ u((y << u(6)) | (y >> u(26))))
        x = u(x + s1)
        y = u(y + s2 + u(1))
        x = u(x + y)
        y = u(x ^ u((y << u(17)) | (y >> u(15))))
        x = u(x + y)
        y = u(x ^ u((y << u(29)) | (y >> u(3))))
        x = u(x + y)
        y = u(x ^ u((y << u(16)) | (y >> u(16))))
        x = u(x + y)
        y = u(x ^ u((y << u(24)) | (y >> u(8))))
        x = u(x + s2)
        y = u(y + s0 + u(2))
        x = u(x + y)
        y = u(x ^ u((y << u(13)) | (y >> u(19))))
        x = u(x + y)
        y = u(x ^ u((y << u(15)) | (y >> u(17))))
        x = u(x + y)
        y = u(x ^ u((y << u(26)) | (y >> u(6))))
        x = u(x + y)
        y = u(x ^ u((y << u(6)) | (y >> u(26))))
        x = u(x + s0)
        y = u(y + s1 + u(3))
        x = u(x + y)
        y = u(x ^ u((y << u(17)) | (y >> u(15))))
        x = u(x + y)
        y = u(x ^ u((y << u(29)) | (y >> u(3))))
        x = u(x + y)
        y = u(x ^ u((y << u(16)) | (y >> u(16))))
        x = u(x + y)
        y = u(x ^ u((y << u(24)) | (y >> u(8))))
        x = u(x + s1)
        y = u(y + s2 + u(4))
        x = u(x + y)
        y = u(x ^ u((y << u(13)) | (y >> u(19))))
        x = u(x + y)
        y = u(x ^ u((y << u(15)) | (y >> u(17))))
        x = u(x + y)
        y = u(x ^ u((y << u(26)) | (y >> u(6))))
        x = u(x + y)
        y = u(x ^ u((y << u(6)) | (y >> u(26))))
        x = u(x + s2)
        y = u(y + s0 + u(5))
        o1[i] = x
        o2[i] = y


def _build_kernel() -> Any:
    try:
        import numba  # noqa: PLC0415 - optional (the cpu-fusion extra)
    except ImportError:
        return False
    try:
        return numba.njit(cache=True, nogil=True)(_threefry_loop)
    except RuntimeError:  # no writable cache location: compile in memory only
        return numba.njit(nogil=True)(_threefry_loop)


def _flat(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` as a 1-d array: size 1 (a broadcast scalar) or the full ``shape``."""
    if a.size == 1:
        return np.ascontiguousarray(a, np.uint32).reshape(1)
    return np.ascontiguousarray(np.broadcast_to(a, shape), np.uint32).reshape(-1)


def threefry_numpy(k1: Any, k2: Any, x1: Any, x2: Any) -> list[np.ndarray]:
    """The two uint32 hash words of NumPy operands (broadcast together)."""
    global _kernel  # noqa: PLW0603 - numba compiles the loop once, on first use
    ops = [np.asarray(a) for a in (k1, k2, x1, x2)]
    shape = np.broadcast_shapes(*(a.shape for a in ops))
    flat = [_flat(a, shape) for a in ops]
    n = int(np.prod(shape, dtype=np.int64))
    o1, o2 = np.empty(n, np.uint32), np.empty(n, np.uint32)
    if n >= MIN_SIZE and switched_on():
        if _kernel is None:
            _kernel = _build_kernel()
        if _kernel is not False:
            _kernel(*flat, o1, o2)
            return [o1.reshape(shape), o2.reshape(shape)]
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        k1b, k2b, x1b, x2b = (a if a.size == 1 else a[start:stop] for a in flat)
        _rounds_in_place(k1b, k2b, x1b, x2b, o1[start:stop], o2[start:stop])
    return [o1.reshape(shape), o2.reshape(shape)]


def _rounds_in_place(k1: np.ndarray, k2: np.ndarray, x1: np.ndarray, x2: np.ndarray,
                     x: np.ndarray, y: np.ndarray) -> None:
    u32 = np.uint32
    ks = [k1, k2, k1 ^ k2 ^ u32(_PARITY)]
    np.add(x1, ks[0], out=x)
    np.add(x2, ks[1], out=y)
    t = np.empty_like(y)
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            np.add(x, y, out=x)
            np.left_shift(y, u32(r), out=t)
            np.right_shift(y, u32(32 - r), out=y)
            np.bitwise_or(y, t, out=y)
            np.bitwise_xor(x, y, out=y)
        np.add(x, ks[(i + 1) % 3], out=x)
        np.add(y, ks[(i + 2) % 3], out=y)
        np.add(y, u32(i + 1), out=y)
