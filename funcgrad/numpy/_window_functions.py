"""Window functions of signal processing, as in ``jax.numpy``: ``bartlett``, ``blackman``,
``hamming``, ``hanning`` and ``kaiser``, in the default float dtype.

>>> import funcgrad.numpy as fnp
>>> fnp.bartlett(3).tolist()
[0.0, 1.0, 0.0]
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import dtypes
from funcgrad.errors import ConcretizationTypeError


def _window(name: str, m: Any) -> tuple[int, Any]:
    """The static length and the sample positions 0..m-1 (default float dtype)."""
    try:
        n = operator.index(m)
    except TypeError as e:
        raise ConcretizationTypeError(f"M argument of jnp.{name} must be a static Python int, "
                                      f"got {m!r}") from e
    return n, fnp.arange(max(n, 0), dtype=dtypes.default_float())


def bartlett(M: int) -> Any:  # noqa: N803
    """The triangular (Bartlett) window of ``M`` points.

    >>> import funcgrad.numpy as fnp
    >>> fnp.bartlett(5).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    m, n = _window("bartlett", M)
    if m <= 1:
        return fnp.ones((max(m, 0),), dtypes.default_float())
    return 1 - fnp.abs(2 * n + 1 - m) / (m - 1)


def blackman(M: int) -> Any:  # noqa: N803
    """The Blackman window of ``M`` points.

    >>> import funcgrad.numpy as fnp
    >>> [round(v, 4) for v in fnp.blackman(3).tolist()]
    [-0.0, 1.0, -0.0]
    """
    m, n = _window("blackman", M)
    if m <= 1:
        return fnp.ones((max(m, 0),), dtypes.default_float())
    return (0.42 - 0.5 * fnp.cos(2 * np.pi * n / (m - 1))
            + 0.08 * fnp.cos(4 * np.pi * n / (m - 1)))


def hamming(M: int) -> Any:  # noqa: N803
    """The Hamming window of ``M`` points.

    >>> import funcgrad.numpy as fnp
    >>> [round(v, 4) for v in fnp.hamming(3).tolist()]
    [0.08, 1.0, 0.08]
    """
    m, n = _window("hamming", M)
    if m <= 1:
        return fnp.ones((max(m, 0),), dtypes.default_float())
    return 0.54 - 0.46 * fnp.cos(2 * np.pi * n / (m - 1))


def hanning(M: int) -> Any:  # noqa: N803
    """The Hann window of ``M`` points.

    >>> import funcgrad.numpy as fnp
    >>> fnp.hanning(3).tolist()
    [0.0, 1.0, 0.0]
    """
    m, n = _window("hanning", M)
    if m <= 1:
        return fnp.ones((max(m, 0),), dtypes.default_float())
    return 0.5 * (1 - fnp.cos(2 * np.pi * n / (m - 1)))


def kaiser(M: int, beta: Any) -> Any:  # noqa: N803
    """The Kaiser window of ``M`` points with shape parameter ``beta`` (differentiable in
    ``beta``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.kaiser(3, 0.0).tolist()
    [1.0, 1.0, 1.0]
    """
    m, n = _window("kaiser", M)
    if m <= 1:
        return fnp.ones((max(m, 0),), dtypes.default_float())
    alpha = 0.5 * (m - 1)
    return fnp.i0(beta * fnp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / fnp.i0(beta)


__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]
