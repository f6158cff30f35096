"""The counter-based hash behind ``funcgrad.random``: Threefry-2x32 (20 rounds).

``threefry2x32(k1, k2, x1, x2)`` hashes each pair of 32-bit counts ``(x1, x2)`` under
the key ``(k1, k2)`` and gives two uint32 arrays, exactly as JAX's ``threefry2x32``
primitive (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011).
Operands are uint32 of one shape (or rank 0, broadcast); the outputs are integers, so
derivatives through it are zero.

>>> import numpy as np
>>> from funcgrad.primitives.prng import threefry2x32
>>> u = lambda v: np.uint32(v)
>>> [hex(int(o)) for o in threefry2x32(u(0x13198a2e), u(0x03707344),
...                                    u(0x243f6a88), u(0x85a308d3))]
['0xc4923a9c', '0x483df7a0']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Primitive
from funcgrad.errors import DTypeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives._threefry_cpu import threefry_numpy
from funcgrad.primitives.rules import elementwise_batch, same_shape_dtype

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


def _threefry_abstract(k1: ShapedArray, k2: ShapedArray, x1: ShapedArray, x2: ShapedArray
                       ) -> tuple[ShapedArray, ShapedArray]:
    for a in (k1, k2, x1, x2):
        if a.dtype != np.uint32:
            raise DTypeError(f"threefry2x32 needs uint32 operands, got "
                             f"{[str(b.dtype) for b in (k1, k2, x1, x2)]}")
    out = same_shape_dtype("threefry2x32", k1, k2, x1, x2)
    aval = ShapedArray(out.shape, dtypes.to_dtype(np.uint32))
    return aval, aval


def _threefry_impl(xp: Any, k1: Any, k2: Any, x1: Any, x2: Any) -> list[Any]:
    if xp is np:
        return threefry_numpy(k1, k2, x1, x2)
    with np.errstate(over="ignore"):  # uint32 arithmetic wraps around, as it should
        return _threefry_rounds(xp, k1, k2, x1, x2)


def _threefry_rounds(xp: Any, k1: Any, k2: Any, x1: Any, x2: Any) -> list[Any]:
    shape = np.broadcast_shapes(*(a.shape for a in (k1, k2, x1, x2)))
    u32 = np.uint32
    ks = [xp.broadcast_to(k1, shape).astype(u32), xp.broadcast_to(k2, shape).astype(u32)]
    ks.append(ks[0] ^ ks[1] ^ u32(_PARITY))
    x = [xp.broadcast_to(x1, shape) + ks[0], xp.broadcast_to(x2, shape) + ks[1]]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x[0] = x[0] + x[1]
            x[1] = (x[1] << u32(r)) | (x[1] >> u32(32 - r))
            x[1] = x[0] ^ x[1]
        x[0] = x[0] + ks[(i + 1) % 3]
        x[1] = x[1] + ks[(i + 2) % 3] + u32(i + 1)
    return [xp.asarray(x[0], dtype=u32), xp.asarray(x[1], dtype=u32)]


threefry2x32_p = Primitive("threefry2x32", abstract_eval=_threefry_abstract,
                           impl=_threefry_impl, multiple_results=True)


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> list[Any]:
    """The two uint32 hash words of the counts ``(x1, x2)`` under the key ``(k1, k2)``."""
    return threefry2x32_p.bind(k1, k2, x1, x2)


def _threefry_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    # Integer outputs: nothing flows through the hash (JAX's rule for integer results).
    return threefry2x32_p.bind(*primals), [None, None]


threefry2x32_p.jvp = _threefry_jvp
threefry2x32_p.vjp = lambda cts, primals, outs: [None, None, None, None]
threefry2x32_p.vjp_reads = ""
threefry2x32_p.batch = elementwise_batch(threefry2x32_p)
threefry2x32_p.describe(lax="threefry2x32", fusion=None, cuda=None, ufunc=None,
                        torch_method=None,
                        lax_fn=threefry2x32)

__all__ = ["threefry2x32_p", "threefry2x32"]
