"""Central finite differences of scalar NumPy functions, the numerical check of gradients
in the tests that compare with PyTorch."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def central_grad(f: Callable[[np.ndarray], float], x: np.ndarray,
                 eps: float = 1e-6) -> np.ndarray:
    """``df/dx`` at ``x`` by central differences, one coordinate at a time (float64)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        g[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return g
