"""Comparing half-precision results with PyTorch's in ulps of the half type (the
half-precision review tests)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

MANT = {"bfloat16": 7, "float16": 10}
TINY = {"bfloat16": 2.0 ** -126, "float16": 2.0 ** -14}


def ulp_error(mine: Any, theirs: Any, dt: str) -> float:
    """The largest difference in ulps of the half type, each measured at the larger of the
    element and 1/16 of the tensor's largest magnitude (a gradient that cancels to a tiny
    value is compared at the scale of its terms)."""
    a = np.asarray(mine.detach().float().numpy(), np.float64)
    b = np.asarray(theirs.detach().float().numpy(), np.float64)
    assert a.shape == b.shape
    if a.size == 0:
        return 0.0
    assert np.array_equal(np.isnan(a), np.isnan(b))
    a, b = np.nan_to_num(a), np.nan_to_num(b)
    scale = np.maximum(np.maximum(np.abs(b), np.abs(b).max() / 16), TINY[dt])
    ulp = 2.0 ** (np.floor(np.log2(scale)) - MANT[dt])
    return float((np.abs(a - b) / ulp).max())


def run_functional(lib: Any, f: Callable[..., Any], arrays: Sequence[Any], dt: str,
                   diff: Sequence[int], seed: int) -> list[Any]:
    """``f(lib.nn.functional, *tensors)`` on ``arrays`` in ``dt`` and the gradients of the
    operands ``diff`` for a cotangent drawn with ``seed``: ``[out, *grads]``."""
    ts = []
    for i, a in enumerate(arrays):
        t = lib.tensor(a, dtype=getattr(lib, dt))
        if i in diff:
            t.requires_grad_(True)
        ts.append(t)
    out = f(lib.nn.functional, *ts)
    g = np.random.default_rng(seed).uniform(-1, 1, tuple(out.shape))
    out.backward(lib.tensor(g, dtype=out.dtype))
    return [out] + [ts[i].grad for i in diff]
