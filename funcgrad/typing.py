"""``jax.typing``: the annotations JAX code writes (``ArrayLike``, ``DTypeLike``).

>>> from funcgrad.typing import ArrayLike
>>> ArrayLike is not None
True
"""

from typing import Any

import numpy as np

from funcgrad.array import Array

ArrayLike = Array | np.ndarray | np.bool_ | np.number | bool | int | float | complex
DTypeLike = str | type | np.dtype | Any

__all__ = ["ArrayLike", "DTypeLike"]
