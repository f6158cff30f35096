"""The public names of ``jax.dtypes`` that belong to the JAX face (``issubdtype`` with
bfloat16 and typed keys, ``finfo``, ``iinfo``, ``float0``, ``prng_key``...). ``funcgrad``'s
package init attaches them to :mod:`funcgrad.dtypes`, the engine's dtype module, so that
``jax.dtypes.issubdtype(x.dtype, jnp.floating)`` runs unchanged.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> jax.dtypes.issubdtype(jnp.bfloat16, jnp.floating)
True
>>> jax.dtypes.issubdtype(jax.random.key(0).dtype, jax.dtypes.prng_key)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.errors import TypePromotionError
from funcgrad.numpy._dtype_info import finfo, iinfo
from funcgrad.numpy._dtype_info import issubdtype as _np_issubdtype

__all__ = ["TypePromotionError", "extended", "finfo", "float0", "iinfo", "issubdtype",
           "itemsize_bits", "prng_key", "scalar_type_of"]


extended = dtypes.extended
prng_key = dtypes.prng_key
float0 = dtypes.FLOAT0


def issubdtype(a: Any, b: Any) -> bool:
    """Whether ``a`` is a sub-type of ``b``, typed keys and bfloat16 included.

    >>> issubdtype(np.int8, np.integer)
    True
    """
    return _np_issubdtype(a, b)


def itemsize_bits(dtype: Any) -> int:
    """The size of one element in bits.

    >>> itemsize_bits(np.float16)
    16
    """
    return 8 * np.dtype(dtype).itemsize


def scalar_type_of(x: Any) -> type:
    """The Python scalar type of ``x``'s kind: ``bool``, ``int``, ``float`` or ``complex``.

    >>> scalar_type_of(np.ones(2, np.float32))
    <class 'float'>
    """
    kind = np.dtype(getattr(x, "dtype", np.asarray(x).dtype)).kind
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}.get(kind, float)
